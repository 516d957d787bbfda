package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.runtime.config.ConfigDocs;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.edge.http.HttpSettings;
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
 * The configuration reference's tables ({@code docs/reference/configuration.md}) are the config tables rendered
 * ({@link ConfigDocs}). After changing a setting, regenerate them with {@code ./mvnw -B -pl cli -am test
 * -Dtest=ReadmeConfigTablesTest -Dsurefire.failIfNoSpecifiedTests=false -Dim.config.write=true} ({@code
 * -Dim.config.writeReadme=true}, the older name, works too).
 */
class ReadmeConfigTablesTest {

  private static final Path CONFIG_DOC = Path.of("..", "docs", "reference", "configuration.md");
  private static final Pattern BLOCK = Pattern.compile("<!-- config:[^>]*-->\n.*?<!-- /config -->", Pattern.DOTALL);

  /** Every table a process of the pipeline reads: the runtime's, the launcher's and each component's. */
  static List<ConfigTable> allTables() {
    List<ConfigTable> tables = new ArrayList<>(List.of(ImConfig.TABLE, HttpSettings.TABLE, PipelineRuntime.TABLE,
        AuthConfig.TABLE, RegistrySettings.TABLE, CliConfig.TABLE));
    ServiceLoader.load(PipelineComponent.class).forEach(c -> tables.addAll(c.configTables()));
    return tables;
  }

  @Test
  void configurationReferenceTablesAreRenderedFromTheConfigTables() throws IOException {
    // Given the configuration reference as committed
    String doc = Files.readString(CONFIG_DOC, StandardCharsets.UTF_8);

    // When its blocks are rendered from the tables
    String expected = ConfigDocs.render(doc, allTables());
    boolean write = Boolean.getBoolean("im.config.write") || Boolean.getBoolean("im.config.writeReadme");
    if (write) {
      Files.writeString(CONFIG_DOC, expected, StandardCharsets.UTF_8);
    }

    // Then nothing changes (the message shows each block as it should read)
    List<String> want = blocks(expected);
    List<String> have = blocks(write ? expected : doc);
    assertThat(have).hasSameSizeAs(want);
    for (int i = 0; i < want.size(); i++) {
      assertThat(have.get(i)).as("docs/reference/configuration.md config block differs from the config tables; "
          + "expected:\n%s\n\nregenerate: ./mvnw -B -pl cli -am test -Dtest=ReadmeConfigTablesTest "
          + "-Dsurefire.failIfNoSpecifiedTests=false -Dim.config.write=true", want.get(i)).isEqualTo(want.get(i));
    }
  }

  @Test
  void theReadmeHasNoConfigurationTablesLeft() throws IOException {
    // Given the README as committed
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);

    // Then it holds no generated block: the tables live in the configuration reference only (one home per fact)
    assertThat(blocks(readme)).isEmpty();
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
