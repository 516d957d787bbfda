package dev.impipe.schemas.compat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityType;
import org.apache.avro.SchemaCompatibility.SchemaIncompatibilityType;
import org.apache.avro.SchemaCompatibility.SchemaPairCompatibility;

/**
 * Offline FULL compatibility gate against each released version kept under {@code <released>/<RecordName>/v*.avsc}:
 * BACKWARD (the current schema reads data written with the released one: new consumers, old data) and FORWARD (the
 * released schema reads data written with the current one: consumers not upgraded yet, new data).
 *
 * <p>One tolerated FORWARD break: a released enum without a {@code default} cannot read any symbol added later
 * (Avro fails the record). Versions released before enums had defaults (v1) are such; their readers are told to
 * upgrade, which is why every growing enum has a default since v2. Every other forward problem with them still fails.
 *
 * <p>Run by the build at {@code process-classes}; a non-empty problem list fails {@code ./mvnw verify}.
 */
public final class CompatibilityCheck {

  private CompatibilityCheck() {}

  /** Returns one human-readable line per incompatibility; empty when every schema is compatible. */
  public static List<String> check(Path currentDir, Path releasedDir) throws IOException {
    List<String> problems = new ArrayList<>();
    if (!Files.isDirectory(releasedDir)) {
      return problems;
    }
    try (Stream<Path> recordDirs = Files.list(releasedDir)) {
      for (Path recordDir : recordDirs.filter(Files::isDirectory).sorted().toList()) {
        String name = recordDir.getFileName().toString();
        Path current = currentDir.resolve(name + ".avsc");
        if (!Files.exists(current)) {
          problems.add(name + ": released schema has no current version " + current
              + " (schemas are never removed)");
          continue;
        }
        Schema reader = new Schema.Parser().parse(current.toFile());
        try (Stream<Path> versions = Files.list(recordDir)) {
          List<Path> released = versions.filter(p -> p.toString().endsWith(".avsc"))
              .sorted(java.util.Comparator.comparingInt(CompatibilityCheck::versionNumber)).toList();
          for (Path version : released) {
            boolean superseded = !version.equals(released.get(released.size() - 1));
            checkVersion(name, current, reader, recordDir, version, superseded, problems);
          }
        }
      }
    }
    return problems;
  }

  /**
   * One released version against the current schema, both directions. A superseded version (not the latest) whose
   * enum has no default may miss symbols added since: its readers fail on them, which is why it was superseded; every
   * other problem counts for every version, and nothing is tolerated against the latest.
   */
  private static void checkVersion(String name, Path current, Schema reader, Path recordDir, Path released,
      boolean superseded, List<String> problems) throws IOException {
    Schema writer = new Schema.Parser().parse(released.toFile());
    SchemaPairCompatibility result =
        SchemaCompatibility.checkReaderWriterCompatibility(reader, writer);
    if (result.getType() != SchemaCompatibilityType.COMPATIBLE) {
      problems.add(name + ": current " + current.getFileName() + " cannot read data written with "
          + recordDir.getFileName() + "/" + released.getFileName() + ": "
          + result.getResult().getIncompatibilities());
    }
    SchemaPairCompatibility forward = SchemaCompatibility.checkReaderWriterCompatibility(writer, reader);
    List<String> forwardProblems = forward.getResult().getIncompatibilities().stream()
        .filter(i -> !(superseded && i.getType() == SchemaIncompatibilityType.MISSING_ENUM_SYMBOLS
            && i.getReaderFragment().getType() == Schema.Type.ENUM
            && i.getReaderFragment().getEnumDefault() == null))
        .map(Object::toString).toList();
    if (!forwardProblems.isEmpty()) {
      problems.add(name + ": " + recordDir.getFileName() + "/" + released.getFileName()
          + " (readers not upgraded yet) cannot read data written with current " + current.getFileName()
          + ": " + forwardProblems);
    }
    List<String> removed = removedEnumSymbols(reader, writer);
    if (!removed.isEmpty()) {
      problems.add(name + ": current " + current.getFileName() + " removes enum symbols released in "
          + recordDir.getFileName() + "/" + released.getFileName() + ": " + removed
          + " (symbols are never removed)");
    }
  }

  private static int versionNumber(Path file) {
    String n = file.getFileName().toString().replaceAll("\\D", "");
    return n.isEmpty() ? 0 : Integer.parseInt(n);
  }

  /**
   * Enum symbols of {@code released} missing from {@code current}, as {@code Enum.SYMBOL}. Avro's check alone
   * accepts a removal once the enum has a {@code default} (old data then reads as the default), but a released
   * symbol is public API: producers on that version still write it and mean it.
   */
  static List<String> removedEnumSymbols(Schema current, Schema released) {
    Map<String, Schema> currentEnums = new HashMap<>();
    collectEnums(current, currentEnums, new HashSet<>());
    Map<String, Schema> releasedEnums = new TreeMap<>();
    collectEnums(released, releasedEnums, new HashSet<>());
    List<String> removed = new ArrayList<>();
    releasedEnums.forEach((fullName, enumSchema) -> {
      Schema now = currentEnums.get(fullName);
      if (now != null) {
        for (String symbol : enumSchema.getEnumSymbols()) {
          if (!now.hasEnumSymbol(symbol)) {
            removed.add(enumSchema.getName() + "." + symbol);
          }
        }
      }
    });
    return removed;
  }

  private static void collectEnums(Schema schema, Map<String, Schema> out, Set<String> seen) {
    switch (schema.getType()) {
      case ENUM -> out.put(schema.getFullName(), schema);
      case RECORD -> {
        if (seen.add(schema.getFullName())) {
          schema.getFields().forEach(f -> collectEnums(f.schema(), out, seen));
        }
      }
      case UNION -> schema.getTypes().forEach(t -> collectEnums(t, out, seen));
      case ARRAY -> collectEnums(schema.getElementType(), out, seen);
      case MAP -> collectEnums(schema.getValueType(), out, seen);
      default -> {
      }
    }
  }

  /** {@code CompatibilityCheck <currentDir> <releasedDir>}; throws (failing the build) on any incompatibility. */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      throw new IllegalArgumentException("usage: CompatibilityCheck <current-avsc-dir> <released-dir>");
    }
    List<String> problems = check(Path.of(args[0]), Path.of(args[1]));
    if (!problems.isEmpty()) {
      throw new IllegalStateException("Schema changes are not FULL (BACKWARD and FORWARD) compatible:\n  "
          + String.join("\n  ", problems));
    }
    System.out
        .println("[schema-compatibility] every schema reads, and is read by, all released versions under " + args[1]);
  }
}
