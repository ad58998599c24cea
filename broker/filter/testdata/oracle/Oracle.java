// Oracle evaluates SQL92 filter expressions with the Apache RocketMQ filter
// module and prints one result per input line, to record golden cases for
// the Go implementation (see ../../oracle_test.go).
//
// Input lines:  hex(expression) TAB hex(properties string)
// Output lines: the input line, TAB, one of PARSE_ERROR TRUE FALSE NULL
//               EXCEPTION.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.rocketmq.filter.expression.EvaluationContext;
import org.apache.rocketmq.filter.expression.Expression;
import org.apache.rocketmq.filter.parser.SelectorParser;

public class Oracle {
    static String unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(b, StandardCharsets.UTF_8);
    }

    static Map<String, String> props(String s) {
        Map<String, String> m = new HashMap<>();
        for (String chunk : s.split("\u0002")) {
            int i = chunk.indexOf('\u0001');
            if (i > 0 && i < chunk.length() - 1) {
                m.put(chunk.substring(0, i), chunk.substring(i + 1));
            }
        }
        return m;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            String result;
            Expression e;
            try {
                e = SelectorParser.parse(unhex(f[0]));
            } catch (Throwable t) {
                e = null;
            }
            if (e == null) {
                result = "PARSE_ERROR";
            } else {
                final Map<String, String> m = props(unhex(f[1]));
                EvaluationContext ctx = new EvaluationContext() {
                    public Object get(String name) {
                        return m.get(name);
                    }

                    public Map<String, Object> keyValues() {
                        return new HashMap<>(m);
                    }
                };
                try {
                    Object v = e.evaluate(ctx);
                    if (v == null) {
                        result = "NULL";
                    } else if (v instanceof Boolean) {
                        result = ((Boolean) v) ? "TRUE" : "FALSE";
                    } else {
                        result = "NOT_BOOLEAN";
                    }
                } catch (Throwable t) {
                    result = "EXCEPTION";
                }
            }
            out.append(f[0]).append('\t').append(f[1]).append('\t').append(result).append('\n');
        }
        System.out.print(out);
    }
}
