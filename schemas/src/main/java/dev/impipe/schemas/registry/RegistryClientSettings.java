package dev.impipe.schemas.registry;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Locale;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How the REST client authenticates to the schema registry and which certificates it trusts, read from these
 * environment variables by the runtime's {@code RegistrySettings} table (names follow Confluent's client settings):
 * <ul>
 *   <li>{@code SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO} = {@code user:password}: HTTP basic auth (replaces credentials
 *       in the URL's user info);
 *   <li>{@code SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION}: the trust store of an {@code https} registry (a private CA);
 *       {@code SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE} {@code PKCS12} (default), {@code JKS} or {@code PEM} (X.509
 *       certificates, e.g. a Kubernetes {@code ca.crt}); {@code SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD} if the
 *       store has one. Without a trust store, the JVM's default trust applies.
 * </ul>
 *
 * @param basicAuthUserInfo {@code user:password}, or empty
 * @param trustStore trust store file, or empty
 * @param trustStoreType {@code PKCS12}, {@code JKS} or {@code PEM}
 * @param trustStorePassword its password, or empty
 */
public record RegistryClientSettings(Optional<String> basicAuthUserInfo, Optional<Path> trustStore,
    String trustStoreType, Optional<String> trustStorePassword) {

  public static final String SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO = "SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO";
  public static final String SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION = "SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION";
  public static final String SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE = "SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE";
  public static final String SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD = "SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD";

  /** No credentials, the JVM's trust. */
  public static final RegistryClientSettings NONE =
      new RegistryClientSettings(Optional.empty(), Optional.empty(), "PKCS12", Optional.empty());

  public RegistryClientSettings {
    basicAuthUserInfo.ifPresent(u -> {
      if (u.indexOf(':') <= 0) {
        throw new SchemaRegistryException(SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO + " is invalid: expected "
            + "user:password");
      }
    });
    trustStoreType = trustStoreType.toUpperCase(Locale.ROOT);
    if (!trustStoreType.equals("PKCS12") && !trustStoreType.equals("JKS") && !trustStoreType.equals("PEM")) {
      throw new SchemaRegistryException(SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE + "='" + trustStoreType
          + "' is invalid: expected PKCS12, JKS or PEM");
    }
  }

  /** The TLS context trusting {@link #trustStore()}, or empty for the JVM's default. */
  Optional<SSLContext> sslContext() {
    if (trustStore.isEmpty()) {
      return Optional.empty();
    }
    Path file = trustStore.get();
    try (InputStream in = Files.newInputStream(file)) {
      KeyStore store;
      if (trustStoreType.equals("PEM")) {
        store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        if (certs.isEmpty()) {
          throw new SchemaRegistryException(SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION + "=" + file
              + " holds no certificate");
        }
        int i = 0;
        for (Certificate cert : certs) {
          store.setCertificateEntry("ca-" + i++, cert);
        }
      } else {
        store = KeyStore.getInstance(trustStoreType);
        store.load(in, trustStorePassword.map(String::toCharArray).orElse(null));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return Optional.of(context);
    } catch (IOException | GeneralSecurityException e) {
      throw new SchemaRegistryException(
          "Cannot load the registry trust store " + SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION
              + "=" + file + " (" + trustStoreType + "): " + e.getMessage(),
          e);
    }
  }

  @Override
  public String toString() {
    return "RegistryClientSettings[basic auth " + basicAuthUserInfo.map(u -> u.substring(0, u.indexOf(':')))
        .orElse("none") + ", trust store " + trustStore.map(Path::toString).orElse("JVM default") + "]";
  }
}
