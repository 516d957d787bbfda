package dev.impipe.notify.provider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Base64;

/**
 * The VAPID key pair (RFC 8292) of this deployment: a PEM PKCS#8 P-256 private key file, made with {@code openssl
 * genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out vapid.pem} or {@link #generate(Path)}. Browsers
 * subscribe with {@link #publicKeyBase64Url()} as {@code applicationServerKey}.
 */
public record VapidKeys(ECPrivateKey privateKey, ECPublicKey publicKey) {

  /** Loads the private key file and derives the public key. */
  public static VapidKeys load(Path file) {
    if (!(Pem.readPrivateKey(file, "EC") instanceof ECPrivateKey key)) {
      throw new IllegalArgumentException(file + " does not hold an EC private key");
    }
    if (!key.getParams().getCurve().equals(EcKeys.P256.getCurve())) {
      throw new IllegalArgumentException(file + " holds an EC key that is not P-256 (prime256v1)");
    }
    return new VapidKeys(key, EcKeys.publicKeyOf(key));
  }

  /** Writes a new key pair's private key to {@code file} (mode 0600 where the file system has modes) and loads it. */
  public static VapidKeys generate(Path file) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(EcKeys.P256);
      ECPrivateKey key = (ECPrivateKey) generator.generateKeyPair().getPrivate();
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.deleteIfExists(tmp);
      if (Files.getFileAttributeView(file.getParent() == null ? Path.of(".") : file.getParent(),
          PosixFileAttributeView.class) != null) {
        Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      } else {
        Files.createFile(tmp);
      }
      Files.writeString(tmp, Pem.encode(key), StandardCharsets.US_ASCII);
      Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return load(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the VAPID key file " + file, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The public key as browsers take it: the 65-byte uncompressed point, base64url without padding. */
  public String publicKeyBase64Url() {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(EcKeys.uncompressed(publicKey));
  }
}
