package dev.impipe.cli;

import dev.impipe.runtime.config.InvalidConfigException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Entry point of {@code bin/im}. */
public final class Main {

  static final String USAGE = """
      usage: bin/im <command> [options]

      commands:
        local [--data-dir DIR]        run everything in one process: embedded Kafka broker and schema registry
                                      (unless KAFKA_BOOTSTRAP_SERVERS / SCHEMA_REGISTRY_URL are set), topics,
                                      every Streams app and the HTTP API. Without --data-dir all data lives in
                                      a temp dir removed on exit; with it, a restart resumes where it stopped.
        local --brokers N --instances M [--data-dir DIR]
                                      the same as separate processes: N Kafka brokers (replication factor 3,
                                      min.insync.replicas 2 from 3 brokers on) and M pipeline instances, HTTP
                                      ports from IM_HTTP_PORT upwards; prints every pid with its role and port
        run [--data-dir DIR]          production: the same against an existing broker and registry
                                      (KAFKA_BOOTSTRAP_SERVERS, SCHEMA_REGISTRY_URL required); IM_COMPONENTS
                                      picks components (e.g. fanout or inbox-store,ingest; default all)
        produce TOPIC                 read JSON lines {"key": "...", "value": {...}} from stdin and publish them
                                      with the topic's Avro serde
        tail TOPIC [--from-beginning] [--max N] [--timeout SECONDS]
                                      print one JSON line per record (read_committed); --timeout stops after
                                      SECONDS without a new record
        token USER [--device D] [--ttl DURATION]
                                      print a bearer token (HS256) for USER, valid 1h by default (at most 30d),
                                      signed with the running `bin/im local`'s secret or with
                                      IM_AUTH_HS256_SECRET / IM_AUTH_HS256_SECRET_FILE when set
        bench SCENARIO [options]      benchmarks: fanout, sync, ackwheel, delay, scale (bin/im bench --help)
        help                          this text

      produce, tail and token find a running `bin/im local` by themselves, or use KAFKA_BOOTSTRAP_SERVERS and
      SCHEMA_REGISTRY_URL. Configuration: see README (IM_* and KAFKA_* environment variables).
      """;

  private Main() {}

  public static void main(String[] args) {
    int status = run(args, System.out, System.err);
    if (status != 0) {
      System.out.flush();
      System.err.flush();
      System.exit(status);
    }
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length == 0 || List.of("help", "--help", "-h").contains(args[0])) {
      out.print(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    // The one read of the process environment: every command and component reads its settings from this map.
    Map<String, String> env = System.getenv();
    try {
      return switch (args[0]) {
        case "local" -> LocalCommand.run(rest, env, out);
        case "run" -> LocalCommand.runAgainstExisting(rest, env, out);
        case "produce" -> ProduceCommand.run(rest, env, System.in, out, err);
        case "tail" -> TailCommand.run(rest, env, out, err);
        case "token" -> TokenCommand.run(rest, env, out);
        default -> {
          err.println("im: unknown command '" + args[0] + "'\n");
          err.print(USAGE);
          yield 2;
        }
      };
    } catch (CliException | InvalidConfigException e) {
      err.println("im " + args[0] + ": " + e.getMessage());
      return 2;
    } catch (Exception e) {
      err.println("im " + args[0] + " failed: " + e);
      e.printStackTrace(err);
      return 1;
    }
  }
}
