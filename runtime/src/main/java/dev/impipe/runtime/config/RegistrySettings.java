package dev.impipe.runtime.config;

import static dev.impipe.schemas.registry.RegistryClientSettings.SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO;
import static dev.impipe.schemas.registry.RegistryClientSettings.SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION;
import static dev.impipe.schemas.registry.RegistryClientSettings.SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD;
import static dev.impipe.schemas.registry.RegistryClientSettings.SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE;

import dev.impipe.schemas.registry.RegistryClientSettings;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * How the schema-registry client authenticates and which certificates it trusts ({@link RegistryClientSettings};
 * names follow Confluent's client settings). Its URL is {@code SCHEMA_REGISTRY_URL} of {@link ImConfig}.
 */
public final class RegistrySettings {

  public static final Setting<String> BASIC_AUTH_USER_INFO = Setting.optional(SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO,
      "`user:password` for HTTP basic auth (replaces credentials in the URL's user info)").secret();
  public static final Setting<Path> TRUSTSTORE_LOCATION = Setting.parsed(SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION,
      "path", null, Path::of, "trust store of an `https://` registry with a private CA")
      .defaultDoc("(the JVM's default trust)");
  public static final Setting<String> TRUSTSTORE_TYPE = Setting.string(SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE, "PKCS12",
      "`PKCS12`, `JKS` or `PEM` (X.509 certificates, e.g. a Kubernetes `ca.crt`)")
      .validate(t -> t.toUpperCase(Locale.ROOT).matches("PKCS12|JKS|PEM"), "PKCS12, JKS or PEM");
  public static final Setting<String> TRUSTSTORE_PASSWORD = Setting.optional(SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD,
      "the trust store's password, if it has one").secret();

  public static final ConfigTable TABLE = ConfigTable.of("registry-client", BASIC_AUTH_USER_INFO,
      TRUSTSTORE_LOCATION, TRUSTSTORE_TYPE, TRUSTSTORE_PASSWORD);

  private RegistrySettings() {
  }

  /** The client settings from the {@code SCHEMA_REGISTRY_*} variables; blank means unset. */
  public static RegistryClientSettings fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    return new RegistryClientSettings(values.optional(BASIC_AUTH_USER_INFO), values.optional(TRUSTSTORE_LOCATION),
        values.get(TRUSTSTORE_TYPE), values.optional(TRUSTSTORE_PASSWORD));
  }
}
