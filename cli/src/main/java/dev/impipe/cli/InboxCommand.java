package dev.impipe.cli;

import dev.impipe.cli.grow.GrowStatus;
import dev.impipe.cli.grow.InboxGrow;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code bin/im inbox}: the inbox's generations (ADR 0014, docs/operations/growing-the-inbox.md). */
@Command(name = "inbox", mixinStandardHelpOptions = true, description = {
    "the inbox's generations: grow it to more partitions, see the migration's progress "
        + "(docs/operations/growing-the-inbox.md)"}, subcommands = {InboxCommand.Grow.class,
            InboxCommand.Status.class})
final class InboxCommand implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return picocli.CommandLine.ExitCode.USAGE;
  }

  /** The pipeline config of these commands: the endpoints of a running bin/im local unless set. */
  static ImConfig config(Map<String, String> env) {
    Map.Entry<String, String> endpoints = Endpoints.resolve(env);
    Map<String, String> withEndpoints = new HashMap<>(env);
    withEndpoints.put(ImConfig.KAFKA_BOOTSTRAP_SERVERS, endpoints.getKey());
    withEndpoints.put(ImConfig.SCHEMA_REGISTRY_URL, endpoints.getValue());
    return ImConfig.fromEnv(withEndpoints);
  }

  @Command(name = "grow", mixinStandardHelpOptions = true, description = {
      "copy inbox generation g (" + ImConfig.IM_INBOX_GENERATION + ") to g+1 with N partitions: entries in order "
          + "with im.prev-seq headers, push registrations, device cursors translated; exactly once, resumable "
          + "(run it again after a crash). Offline: stop the writers first; then restart every app with "
          + ImConfig.IM_INBOX_GENERATION + "=g+1. --online: the fan-out keeps running and is switched over "
          + "(fence, copy the tail, go live); then start the g+1 readers and stop g's."})
  static final class Grow implements Callable<Integer> {

    @Option(names = "--partitions", paramLabel = "N", required = true, description = "partitions of the next generation's user-keyed topics")
    int partitions;

    @Option(names = "--batch", paramLabel = "RECORDS", defaultValue = "500", description = "records per transaction (default: ${DEFAULT-VALUE})")
    int batch;

    @Option(names = "--max-rate", paramLabel = "RECORDS_PER_S", defaultValue = "0", description = "copy at most this many records per second (default: 0 = no limit)")
    long maxRate;

    @Option(names = "--online", description = "switch the running fan-out over instead of needing the writers stopped")
    boolean online;

    @Option(names = "--fence-timeout", paramLabel = "SECONDS", defaultValue = "120", description = "--online: wait at most this long for every fan-out task's fence (default: ${DEFAULT-VALUE})")
    long fenceTimeoutSeconds;

    private final CliContext context;

    Grow(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      if (partitions < 1 || partitions > 10_000) {
        throw new CliException("--partitions must be 1..10000, not " + partitions);
      }
      if (batch < 1 || maxRate < 0 || fenceTimeoutSeconds < 1) {
        throw new CliException("--batch and --fence-timeout must be >= 1 and --max-rate >= 0");
      }
      ImConfig config = config(context.env());
      ImTopics topics = new ImTopics(TopicNames.withPrefix(config.topicPrefix()), SchemaRegistryClients.create(
          config.requireSchemaRegistryUrl(), RegistrySettings.fromEnv(context.env())));
      int generation = ImConfig.INBOX_GENERATION.read(context.env());
      new InboxGrow(config, topics, generation, context.out()).run(new InboxGrow.Options(partitions, batch, maxRate,
          online, java.time.Duration.ofSeconds(fenceTimeoutSeconds)));
      context.out().println(online ? "done: generation " + (generation + 1) + " is live; start its readers with "
          + ImConfig.IM_INBOX_GENERATION + "=" + (generation + 1) + ", then stop generation " + generation + "'s"
          : "done: restart every app with " + ImConfig.IM_INBOX_GENERATION + "=" + (generation + 1));
      context.out().flush();
      return 0;
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true, description = {
      "the generation in use, its partitions, and how far a migration to the next generation is"})
  static final class Status implements Callable<Integer> {

    private final CliContext context;

    Status(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      ImConfig config = config(context.env());
      GrowStatus.print(config, TopicNames.withPrefix(config.topicPrefix()),
          ImConfig.INBOX_GENERATION.read(context.env()), context.out());
      context.out().flush();
      return 0;
    }
  }
}
