package dev.impipe.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.Map;

/** What every {@code bin/im} command reads and writes: the environment and the standard streams. */
record CliContext(Map<String, String> env, InputStream in, PrintStream out, PrintStream err) {}
