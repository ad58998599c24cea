package io.rocketgo.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs named conformance scenarios in one JVM and prints, per scenario,
 * {@code PASS <name> <seconds>[: <note>]} or {@code FAIL <name> <seconds>: <reason>}.
 *
 * <p>Usage: {@code java -Dnamesrv=ip:port -Dbroker=ip:port -Dprefix=p [-Dparallel=true] Driver name:timeoutSeconds ...}
 * The scenario names are the rows of conformance/scenario/table.go. With
 * {@code -Dparallel=true} every scenario runs at once (the restart scenarios).
 *
 * <p>Restart scenarios talk to the Go harness (javadriver) over stdout/stdin:
 * {@code RESTART-PLAN <scenario> <topics>} is answered {@code PLAN <scenario> <killAtMs>},
 * {@code RESTART-WAIT <scenario>} is answered {@code RESTARTED <scenario> <killAtMs> <downMs> <upMs>};
 * either may be answered {@code RESTART-ERROR <scenario> <reason>}.
 */
public final class Driver {
    private Driver() {
    }

    public static void main(String[] args) throws Exception {
        String namesrv = required("namesrv");
        String broker = required("broker");
        String prefix = System.getProperty("prefix", "java");
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "scenario");
            t.setDaemon(true);
            return t;
        });
        Thread reader = new Thread(Driver::readAnswers, "harness-answers");
        reader.setDaemon(true);
        reader.start();
        if (Boolean.getBoolean("parallel")) {
            List<Thread> all = new ArrayList<>();
            for (String arg : args) {
                Thread t = new Thread(() -> runOne(pool, namesrv, broker, prefix, arg), "run-" + arg);
                t.start();
                all.add(t);
            }
            for (Thread t : all) {
                t.join();
            }
        } else {
            for (String arg : args) {
                runOne(pool, namesrv, broker, prefix, arg);
            }
        }
        pool.shutdownNow();
        // Client libraries leave non-daemon threads behind; the run is over.
        System.exit(0);
    }

    /** Answers from the harness, by scenario name. */
    private static final Map<String, BlockingQueue<String[]>> ANSWERS = new ConcurrentHashMap<>();

    private static BlockingQueue<String[]> answers(String scenario) {
        return ANSWERS.computeIfAbsent(scenario, k -> new LinkedBlockingQueue<>());
    }

    private static void readAnswers() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                String[] f = line.trim().split(" ", 3);
                if (f.length >= 2) {
                    answers(f[1]).add(f);
                }
            }
        } catch (java.io.IOException e) {
            // stdin closed: the harness is gone, restart requests will time out
        }
    }

    private static void runOne(ExecutorService pool, String namesrv, String broker, String prefix, String arg) {
        String[] parts = arg.split(":", 2);
        String name = parts[0];
        long timeoutSec = parts.length > 1 ? Long.parseLong(parts[1]) : 60;
        Ctx ctx = new Ctx(name, namesrv, broker, prefix + "_" + name, timeoutSec);
        long start = System.nanoTime();
        String failure = null;
        Thread[] runner = new Thread[1];
        Future<?> f = pool.submit(() -> {
            runner[0] = Thread.currentThread();
            Scenarios.run(name, ctx);
            return null;
        });
        try {
            f.get(timeoutSec, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            String where = runner[0] == null ? "" : " at " + stackOf(runner[0]);
            f.cancel(true);
            failure = "timed out after " + timeoutSec + " s" + (ctx.step == null ? "" : " in step " + ctx.step) + where;
        } catch (java.util.concurrent.ExecutionException e) {
            failure = describe(e.getCause());
        } catch (InterruptedException e) {
            failure = "interrupted";
        } finally {
            ctx.closeAll();
        }
        double secs = (System.nanoTime() - start) / 1e9;
        if (failure == null) {
            String note = ctx.note == null ? "" : ": " + ctx.note.replace('\n', ' ');
            System.out.printf("PASS %s %.2f%s%n", name, secs, note);
        } else {
            System.out.printf("FAIL %s %.2f: %s%n", name, secs, failure.replace('\n', ' '));
        }
        System.out.flush();
    }

    /** Where a stuck scenario thread is: its top frames, innermost first. */
    static String stackOf(Thread t) {
        StringBuilder b = new StringBuilder();
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < st.length && i < 12; i++) {
            if (i > 0) {
                b.append(" < ");
            }
            b.append(st[i].getClassName().replaceFirst("^org\\.apache\\.rocketmq\\.", "o.a.r."))
                .append('.').append(st[i].getMethodName()).append(':').append(st[i].getLineNumber());
        }
        return b.toString();
    }

    static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null && b.length() < 600; c = c.getCause()) {
            if (b.length() > 0) {
                b.append(" <- ");
            }
            b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            if (c.getCause() == c) {
                break;
            }
        }
        return b.toString();
    }

    private static String required(String prop) {
        String v = System.getProperty(prop);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("missing -D" + prop);
        }
        return v;
    }

    /** Per-scenario context: addresses, unique names, deadline, things to shut down. */
    static final class Ctx {
        final String scenario;
        final String namesrv;
        final String broker;
        final String prefix;
        final long deadlineNanos;
        volatile String note; // reported on a PASS line (a measured latency)
        volatile String step; // named in a timeout report
        private final List<Runnable> closers = new ArrayList<>();

        Ctx(String scenario, String namesrv, String broker, String prefix, long timeoutSec) {
            this.scenario = scenario;
            this.namesrv = namesrv;
            this.broker = broker;
            this.prefix = prefix;
            this.deadlineNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSec);
        }

        String name(String s) {
            return prefix + "_" + s;
        }

        long remainingMillis() {
            return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
        }

        /**
         * Reaches the restart point: blocks until every restart scenario is
         * there and returns when (unix ms) the broker will be stopped.
         */
        long planRestart(String... topics) throws InterruptedException {
            System.out.println("RESTART-PLAN " + scenario + " " + String.join(",", topics));
            System.out.flush();
            return Long.parseLong(answer("PLAN")[2]);
        }

        /** Blocks until the broker is back; returns {killAtMs, downMs, upMs}. */
        long[] awaitRestart() throws InterruptedException {
            System.out.println("RESTART-WAIT " + scenario);
            System.out.flush();
            String[] f = answer("RESTARTED")[2].split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])};
        }

        private String[] answer(String want) throws InterruptedException {
            String[] f = answers(scenario).poll(remainingMillis(), TimeUnit.MILLISECONDS);
            if (f == null) {
                throw new AssertionError("no " + want + " answer from the harness");
            }
            if (!f[0].equals(want)) {
                throw new AssertionError("harness: " + String.join(" ", f));
            }
            return f;
        }

        synchronized void onClose(Runnable r) {
            closers.add(r);
        }

        synchronized void closeAll() {
            for (int i = closers.size() - 1; i >= 0; i--) {
                try {
                    closers.get(i).run();
                } catch (RuntimeException e) {
                    // shutting down a client that failed to start
                }
            }
            closers.clear();
        }
    }

    /** Sets an enum-typed property whose enum class moved packages between 4.9 and 5.x. */
    static void setEnum(Object target, String setter, String value) throws Exception {
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(setter) && m.getParameterCount() == 1 && m.getParameterTypes()[0].isEnum()) {
                @SuppressWarnings({"unchecked", "rawtypes"})
                Object v = Enum.valueOf((Class) m.getParameterTypes()[0], value);
                m.invoke(target, v);
                return;
            }
        }
        throw new NoSuchMethodException(setter);
    }

    /** Instantiates the first class that exists (types that moved packages). */
    static Object newOf(String... classNames) throws Exception {
        for (String n : classNames) {
            try {
                return Class.forName(n).getDeclaredConstructor().newInstance();
            } catch (ClassNotFoundException e) {
                // try the next package
            }
        }
        throw new ClassNotFoundException(String.join(" | ", classNames));
    }

    /** Invokes the single public method of that name and arity. */
    static Object call(Object target, String method, Object... args) throws Exception {
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(method) && m.getParameterCount() == args.length) {
                return m.invoke(target, args);
            }
        }
        throw new NoSuchMethodException(method + "/" + args.length);
    }
}
