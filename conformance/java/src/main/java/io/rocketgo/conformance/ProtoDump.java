package io.rocketgo.conformance;

import com.google.protobuf.Descriptors.FileDescriptor;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Prints the file descriptors compiled into Apache's rocketmq-proto jar (the
 * RocketMQ 5 gRPC wire, package apache.rocketmq.v2), one line per file:
 *
 * <pre>
 * JAR file:/.../rocketmq-proto-2.1.1.jar
 * FILE apache/rocketmq/v2/service.proto &lt;base64 FileDescriptorProto&gt;
 * </pre>
 *
 * The Go drift test (conformance/proto_drift_test.go) parses these and compares
 * them field by field with proxy/apiv2's descriptors. Only the apache/rocketmq
 * files are printed; the google/protobuf well-known types they import are not
 * ours to check. Built in the client-5 profile only (the 4.9 lines do not
 * carry rocketmq-proto).
 */
public final class ProtoDump {
  private ProtoDump() {}

  public static void main(String[] args) {
    Deque<FileDescriptor> todo = new ArrayDeque<>();
    // The generated outer classes of definition.proto, service.proto, admin.proto.
    todo.add(apache.rocketmq.v2.MQDomain.getDescriptor());
    todo.add(apache.rocketmq.v2.MQService.getDescriptor());
    todo.add(apache.rocketmq.v2.MQAdmin.getDescriptor());
    Map<String, FileDescriptor> seen = new LinkedHashMap<>();
    while (!todo.isEmpty()) {
      FileDescriptor f = todo.poll();
      if (!f.getName().startsWith("apache/rocketmq/") || seen.containsKey(f.getName())) {
        continue;
      }
      seen.put(f.getName(), f);
      todo.addAll(f.getDependencies());
    }
    // Which jar the classes came from: a target/client-5/lib built before the
    // 2.1.1 dependency may still hold rocketmq-proto-2.0.4.jar as well.
    System.out.println("JAR " + apache.rocketmq.v2.MQService.class.getProtectionDomain().getCodeSource().getLocation());
    Base64.Encoder b64 = Base64.getEncoder();
    for (FileDescriptor f : seen.values()) {
      System.out.println("FILE " + f.getName() + " " + b64.encodeToString(f.toProto().toByteArray()));
    }
    System.out.flush();
  }
}
