package dev.impipe.cli;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.Setting;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/im run [--data-dir DIR]}: the production process, {@code bin/im local} without embedded
 * infrastructure: the broker and registry must be given, and {@code IM_COMPONENTS} may pick the components of this
 * instance.
 */
@Command(name = "run", mixinStandardHelpOptions = true, description = {
    "production: the same as local against an existing broker and registry (KAFKA_BOOTSTRAP_SERVERS, "
        + "SCHEMA_REGISTRY_URL required); IM_COMPONENTS picks components (e.g. fanout or inbox-store,ingest; "
        + "default all)."})
final class RunCommand implements Callable<Integer> {

  @Option(names = "--data-dir", paramLabel = "DIR", description = "keep the state stores here (default: a temp dir "
      + "removed on exit)")
  Path dataDir;

  private final CliContext context;

  RunCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws Exception {
    for (Setting<String> required : List.of(ImConfig.BOOTSTRAP, ImConfig.REGISTRY)) {
      if (!required.isSet(context.env())) {
        throw new CliException(required.name() + " must be set: `bin/im run` uses an existing broker and registry "
            + "(use `bin/im local` for embedded ones)");
      }
    }
    return LocalCommand.serve(context.env(), Optional.ofNullable(dataDir), 1, 1, context.out(), false);
  }
}
