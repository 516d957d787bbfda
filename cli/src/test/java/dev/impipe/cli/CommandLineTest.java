package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** {@code bin/im}'s command line: what each command's options parse to, errors, exit codes, help, completion. */
class CommandLineTest {

  /** Parses {@code args} without running anything; returns the chosen command with its options set. */
  private static <T> T parse(Class<T> command, String... args) {
    CliContext context = new CliContext(Map.of(), InputStream.nullInputStream(), new PrintStream(
        PrintStream.nullOutputStream()), new PrintStream(PrintStream.nullOutputStream()));
    ParseResult parsed = Main.commandLine(context).parseArgs(args);
    return command.cast(parsed.subcommand().commandSpec().userObject());
  }

  @Test
  void localTakesADataDirAndProcessCounts() {
    LocalCommand local = parse(LocalCommand.class, "local");
    assertThat(local.dataDir).isNull();
    assertThat(local.brokers).isEqualTo("1");
    assertThat(local.instances).isEqualTo("1");

    local = parse(LocalCommand.class, "local", "--brokers", "3", "--instances", "2", "--data-dir=/tmp/im");
    assertThat(local.dataDir).isEqualTo(Path.of("/tmp/im"));
    assertThat(local.brokers).isEqualTo("3");
    assertThat(local.instances).isEqualTo("2");
  }

  @Test
  void runTakesADataDir() {
    assertThat(parse(RunCommand.class, "run", "--data-dir", "/var/lib/im").dataDir).isEqualTo(Path.of("/var/lib/im"));
    assertThat(parse(RunCommand.class, "run").dataDir).isNull();
  }

  @Test
  void produceTakesATopic() {
    assertThat(parse(ProduceCommand.class, "produce", "im.messages").topic).isEqualTo("im.messages");
  }

  @Test
  void tailTakesOptionsBeforeOrAfterTheTopic() {
    // As the acceptance scripts call it: the topic first
    TailCommand tail = parse(TailCommand.class, "tail", "im.inbox", "--from-beginning", "--timeout", "15");
    assertThat(tail.topic).isEqualTo("im.inbox");
    assertThat(tail.fromBeginning).isTrue();
    assertThat(tail.timeoutSeconds).isEqualTo(15);
    assertThat(tail.max).isNull();

    tail = parse(TailCommand.class, "tail", "--max", "5", "im.rejected");
    assertThat(tail.topic).isEqualTo("im.rejected");
    assertThat(tail.fromBeginning).isFalse();
    assertThat(tail.max).isEqualTo(5);
    assertThat(tail.timeoutSeconds).isNull();
  }

  @Test
  void tokenTakesAUserADeviceAndALifetime() {
    TokenCommand token = parse(TokenCommand.class, "token", "alice", "--device", "phone", "--ttl", "2h");
    assertThat(token.user).isEqualTo("alice");
    assertThat(token.device).isEqualTo("phone");
    assertThat(token.ttl).isEqualTo("2h");

    token = parse(TokenCommand.class, "token", "probe");
    assertThat(token.device).isNull();
    assertThat(token.ttl).isEqualTo("1h");
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "run", "produce im.messages", "tail im.inbox", "token alice", "completion"})
  void anUnknownOptionIsAUsageErrorWithStatus2(String commandLine) {
    String command = commandLine.split(" ")[0];
    String[] args = (commandLine + " --nope").split(" ");
    String err = CliRun.of(Map.of(), args).usageError();
    assertThat(err).contains("im " + command + ": Unknown option: '--nope'").contains("Usage: bin/im " + command)
        .contains("Try 'bin/im " + command + " --help' for more.");
  }

  @Test
  void badValuesAreUsageErrors() {
    assertThat(CliRun.of(Map.of(), "tail", "im.inbox", "--max", "many").usageError())
        .contains("im tail: Invalid value for option '--max': 'many' is not a long");
    assertThat(CliRun.of(Map.of(), "tail", "im.inbox", "--max", "0").usageError())
        .contains("im tail: --max must be a positive whole number, got '0'");
    assertThat(CliRun.of(Map.of(), "tail").usageError()).contains("im tail: Missing required parameter: 'TOPIC'");
    assertThat(CliRun.of(Map.of(), "produce", "a", "b").usageError()).contains("Unmatched argument at index 2: 'b'");
    assertThat(CliRun.of(Map.of(), "local", "--brokers", "10").usageError())
        .contains("im local: --brokers takes a number from 1 to 9, not '10'");
  }

  @Test
  void anUnknownCommandIsAUsageError() {
    assertThat(CliRun.of(Map.of(), "serve").usageError()).contains("im: Unmatched argument at index 0: 'serve'");
  }

  @Test
  void noCommandPrintsTheHelpWithStatus2() {
    CliRun run = CliRun.of(Map.of());
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.out()).contains("Usage: bin/im [-hV] [COMMAND]");
  }

  @ParameterizedTest
  @ValueSource(strings = {"local", "run", "produce", "tail", "token", "completion"})
  void everyCommandHasAGeneratedHelp(String command) {
    CliRun help = CliRun.of(Map.of(), command, "--help");
    assertThat(help.status()).isZero();
    assertThat(help.out()).startsWith("Usage: bin/im " + command);
    assertThat(CliRun.of(Map.of(), "help", command).out()).isEqualTo(help.out());
  }

  @Test
  void helpNamesEveryOption() {
    assertThat(CliRun.of(Map.of(), "local", "--help").out()).contains("--data-dir=DIR", "--brokers=N",
        "--instances=M");
    assertThat(CliRun.of(Map.of(), "tail", "--help").out()).contains("TOPIC", "--from-beginning", "--max=N",
        "--timeout=SECONDS");
    assertThat(CliRun.of(Map.of(), "token", "--help").out()).contains("USER", "--device=D", "--ttl=DURATION",
        "at most 30d");
  }

  @Test
  void completionPrintsABashScriptForEveryCommandAndOption() {
    CliRun completion = CliRun.of(Map.of(), "completion");
    assertThat(completion.status()).isZero();
    assertThat(completion.out()).contains("complete -F _complete_im", "local", "produce", "tail", "token",
        "--from-beginning", "--data-dir", "--ttl");
  }

  @Test
  void benchIsListedButRunsFromTheSourceCheckout() {
    assertThat(CliRun.of(Map.of(), "bench", "fanout", "--scale", "small").usageError())
        .contains("im bench: bench runs from a source checkout");
  }

  @Test
  void theCommandTreeIsValid() {
    CommandLine cl = Main.commandLine(new CliContext(Map.of(), InputStream.nullInputStream(), System.out, System.err));
    assertThat(cl.getSubcommands()).containsKeys("local", "run", "produce", "tail", "token", "bench", "completion",
        "help");
  }
}
