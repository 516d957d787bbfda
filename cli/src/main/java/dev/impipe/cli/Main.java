package dev.impipe.cli;

import dev.impipe.runtime.config.InvalidConfigException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * Entry point of {@code bin/im}: picocli parses the command line, prints each command's generated {@code --help}
 * and the shell completion script ({@code bin/im completion}). Exit status: 0 done, 1 failed, 2 a usage or
 * configuration error (printed as {@code im COMMAND: reason}, without a stack trace).
 */
@Command(name = "bin/im", mixinStandardHelpOptions = true, versionProvider = Main.Version.class, description = "The instant-messaging pipeline's command line.", subcommands = {
    LocalCommand.class, RunCommand.class, ProduceCommand.class, TailCommand.class,
    TokenCommand.class, InboxCommand.class, Main.Bench.class, Main.Completion.class,
    HelpCommand.class}, footer = {"", "produce, tail and token find a running `bin/im local` by themselves, or use "
        + "KAFKA_BOOTSTRAP_SERVERS and SCHEMA_REGISTRY_URL. Configuration: docs/reference/configuration.md (IM_* and "
        + "KAFKA_* environment variables)."})
public final class Main implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  private Main() {}

  public static void main(String[] args) {
    int status = run(args, System.getenv(), System.in, System.out, System.err);
    if (status != 0) {
      System.out.flush();
      System.err.flush();
      System.exit(status);
    }
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    return run(args, System.getenv(), System.in, out, err);
  }

  /** Runs {@code bin/im args}; returns the exit status. */
  static int run(String[] args, Map<String, String> env, InputStream in, PrintStream out, PrintStream err) {
    return commandLine(new CliContext(env, in, out, err)).execute(args);
  }

  /** The whole command tree; commands get {@code context} through their constructor. */
  static CommandLine commandLine(CliContext context) {
    CommandLine.IFactory factory = new CommandLine.IFactory() {
      @Override
      public <K> K create(Class<K> type) throws Exception {
        try {
          return type.getDeclaredConstructor(CliContext.class).newInstance(context);
        } catch (NoSuchMethodException e) {
          return CommandLine.defaultFactory().create(type);
        }
      }
    };
    CommandLine cl = new CommandLine(Main.class, factory);
    cl.setOut(new PrintWriter(context.out(), true, StandardCharsets.UTF_8));
    cl.setErr(new PrintWriter(context.err(), true, StandardCharsets.UTF_8));
    cl.setParameterExceptionHandler((ParameterException e, String[] args) -> {
      CommandLine failed = e.getCommandLine();
      PrintWriter err = failed.getErr();
      err.println(prefix(failed) + ": " + e.getMessage());
      err.print("Usage: " + failed.getHelp().synopsis(0));
      err.println("Try '" + failed.getCommandSpec().qualifiedName() + " --help' for more.");
      err.flush();
      return CommandLine.ExitCode.USAGE;
    });
    cl.setExecutionExceptionHandler((Exception e, CommandLine failed, CommandLine.ParseResult parsed) -> {
      PrintWriter err = failed.getErr();
      if (e instanceof CliException || e instanceof InvalidConfigException) {
        err.println(prefix(failed) + ": " + e.getMessage());
        err.flush();
        return CommandLine.ExitCode.USAGE;
      }
      err.println(prefix(failed) + " failed: " + e);
      e.printStackTrace(err);
      err.flush();
      return CommandLine.ExitCode.SOFTWARE;
    });
    return cl;
  }

  /** {@code im token} for the token command: how errors start. */
  private static String prefix(CommandLine failed) {
    return failed.getParent() == null ? "im" : "im " + failed.getCommandName();
  }

  /** {@code bin/im} alone: the help, and status 2 (no command is a usage error). */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return CommandLine.ExitCode.USAGE;
  }

  /** {@code bin/im --version}: the version of the cli module's jar, when it has one. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = Main.class.getPackage().getImplementationVersion();
      return new String[] {"im " + (version == null ? "(built from source)" : version)};
    }
  }

  /**
   * {@code bin/im bench}: {@code bin/im} hands it to the bench module's own command line ({@code
   * dev.impipe.bench.BenchMain}) in a source checkout; it is listed here for the help and shell completion.
   */
  @Command(name = "bench", description = "benchmarks: fanout, sync, ackwheel, delay, scale, push, jmh "
      + "(bin/im bench --help; from a source checkout only)")
  static final class Bench implements Callable<Integer> {
    @Unmatched
    List<String> args;

    @Override
    public Integer call() {
      throw new CliException("bench runs from a source checkout (bin/im starts dev.impipe.bench.BenchMain for it)");
    }
  }

  /** {@code bin/im completion}: a bash (and zsh, with bashcompinit) completion script for every command. */
  @Command(name = "completion", mixinStandardHelpOptions = true, description = {
      "print a bash completion script for bin/im; load it with: source <(bin/im completion)"})
  static final class Completion implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    private final CliContext context;

    Completion(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      context.out().print(AutoComplete.bash("im", spec.parent().commandLine()));
      context.out().flush();
      return 0;
    }
  }
}
