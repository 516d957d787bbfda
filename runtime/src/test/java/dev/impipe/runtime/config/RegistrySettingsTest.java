package dev.impipe.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.schemas.registry.RegistryClientSettings;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RegistrySettingsTest {

  @Test
  void readsTheVariablesAndDefaultsToNothing() {
    assertThat(RegistrySettings.fromEnv(Map.of())).isEqualTo(RegistryClientSettings.NONE);

    RegistryClientSettings s = RegistrySettings.fromEnv(Map.of(
        "SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", " im-fanout:p:w ",
        "SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", "/etc/ca.crt",
        "SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "pem",
        "SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD", ""));

    assertThat(s).isEqualTo(new RegistryClientSettings(Optional.of("im-fanout:p:w"),
        Optional.of(Path.of("/etc/ca.crt")), "PEM", Optional.empty()));
  }

  @Test
  void aBadTypeNamesTheVariableAndTheLogLineMasksTheCredentials() {
    assertThatThrownBy(() -> RegistrySettings.fromEnv(Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "P12x")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessage("SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE='P12x' is invalid: expected PKCS12, JKS or PEM");

    String line = RegistrySettings.TABLE.read(Map.of("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "im-fanout:s3cret",
        "SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD", "changeit")).describe();

    assertThat(line)
        .contains("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO=****", "SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD=****")
        .doesNotContain("s3cret").doesNotContain("changeit");
  }
}
