package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.runtime.app.PipelineRuntime;
import dev.impipe.runtime.auth.AuthConfig;
import dev.impipe.runtime.config.ConfigDocs;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.runtime.http.HttpSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's configuration tables are the config tables rendered ({@link ConfigDocs}). After changing a setting,
 * regenerate them with {@code ./mvnw -B -pl cli -am test -Dtest=ReadmeConfigTablesTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dim.config.writeReadme=true}.
 */
class ReadmeConfigTablesTest {

  private static final Path README = Path.of("..", "README.md");
  private static final Pattern BLOCK = Pattern.compile("<!-- config:[^>]*-->\n.*?<!-- /config -->", Pattern.DOTALL);

  /** Every table a process of the pipeline reads: the runtime's, the launcher's and each component's. */
  static List<ConfigTable> allTables() {
    List<ConfigTable> tables = new ArrayList<>(List.of(ImConfig.TABLE, HttpSettings.TABLE, PipelineRuntime.TABLE,
        AuthConfig.TABLE, RegistrySettings.TABLE, CliConfig.TABLE));
    ServiceLoader.load(PipelineComponent.class).forEach(c -> tables.addAll(c.configTables()));
    return tables;
  }

  @Test
  void readmeTablesAreRenderedFromTheConfigTables() throws IOException {
    // Given the README as committed
    String readme = Files.readString(README, StandardCharsets.UTF_8);

    // When its blocks are rendered from the tables
    String expected = ConfigDocs.render(readme, allTables());
    if (Boolean.getBoolean("im.config.writeReadme")) {
      Files.writeString(README, expected, StandardCharsets.UTF_8);
    }

    // Then nothing changes (the message shows each block as it should read)
    List<String> want = blocks(expected);
    List<String> have = blocks(Boolean.getBoolean("im.config.writeReadme") ? expected : readme);
    assertThat(have).hasSameSizeAs(want);
    for (int i = 0; i < want.size(); i++) {
      assertThat(have.get(i)).as("README config block differs from the config tables; expected:\n%s\n\nregenerate: "
          + "./mvnw -B -pl cli -am test -Dtest=ReadmeConfigTablesTest -Dsurefire.failIfNoSpecifiedTests=false "
          + "-Dim.config.writeReadme=true", want.get(i)).isEqualTo(want.get(i));
    }
  }

  @Test
  void everyComponentOnTheClassPathHasAConfigTable() {
    List<String> withoutTable = new ArrayList<>();
    ServiceLoader.load(PipelineComponent.class).forEach(c -> {
      if (c.configTables().isEmpty()) {
        withoutTable.add(c.name());
      }
    });
    assertThat(withoutTable).isEmpty();
  }

  private static List<String> blocks(String text) {
    List<String> blocks = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      blocks.add(m.group());
    }
    return blocks;
  }
}
