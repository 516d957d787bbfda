package dev.impipe.notify.provider;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * RFC 8291 message encryption for Web Push with RFC 8188's {@code aes128gcm} content coding, JDK crypto only: an
 * ephemeral ECDH P-256 key per message, HKDF-SHA256 over the shared secret and the subscription's auth secret, one
 * AES-128-GCM record of size {@value #RECORD_SIZE} with the last-record padding delimiter {@code 0x02}.
 */
public final class WebPushEncryption {

  /** The record size written in the header: the whole message is one record. */
  public static final int RECORD_SIZE = 4096;
  /** Largest plaintext: one record holds it, its delimiter and the 16-byte tag. */
  public static final int MAX_PLAINTEXT = RECORD_SIZE - 17;

  private static final SecureRandom RANDOM = new SecureRandom();

  private WebPushEncryption() {}

  /**
   * Encrypts {@code plaintext} for the subscription ({@code uaPublic}: its {@code p256dh}, 65 bytes; {@code auth}: 16
   * bytes) with a fresh ephemeral key and salt.
   */
  public static byte[] encrypt(byte[] plaintext, byte[] uaPublic, byte[] auth) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(EcKeys.P256, RANDOM);
      KeyPair ephemeral = generator.generateKeyPair();
      byte[] salt = new byte[16];
      RANDOM.nextBytes(salt);
      return encrypt(plaintext, uaPublic, auth, (ECPrivateKey) ephemeral.getPrivate(),
          (ECPublicKey) ephemeral.getPublic(), salt);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** As {@link #encrypt(byte[], byte[], byte[])} with a given sender key pair and salt (RFC 8291's test vector). */
  public static byte[] encrypt(byte[] plaintext, byte[] uaPublic, byte[] auth, ECPrivateKey asPrivate,
      ECPublicKey asPublic, byte[] salt) {
    if (plaintext.length > MAX_PLAINTEXT) {
      throw new IllegalArgumentException("a Web Push payload holds at most " + MAX_PLAINTEXT + " bytes, not "
          + plaintext.length);
    }
    if (auth.length != 16 || salt.length != 16) {
      throw new IllegalArgumentException("the auth secret and the salt are 16 bytes");
    }
    try {
      byte[] asPublicBytes = EcKeys.uncompressed(asPublic);
      KeyAgreement agreement = KeyAgreement.getInstance("ECDH");
      agreement.init(asPrivate);
      agreement.doPhase(EcKeys.publicKey(uaPublic), true);
      byte[] ecdhSecret = agreement.generateSecret();
      // RFC 8291 section 3.4: IKM = HKDF(auth, ecdh_secret, "WebPush: info" || 0x00 || ua_public || as_public, 32)
      byte[] keyInfo = concat("WebPush: info\0".getBytes(StandardCharsets.US_ASCII), uaPublic, asPublicBytes);
      byte[] ikm = expand(hmac(auth, ecdhSecret), keyInfo, 32);
      // RFC 8188 section 2.2/2.3: the content key and nonce from PRK = HKDF-Extract(salt, IKM)
      byte[] prk = hmac(salt, ikm);
      byte[] cek = expand(prk, "Content-Encoding: aes128gcm\0".getBytes(StandardCharsets.US_ASCII), 16);
      byte[] nonce = expand(prk, "Content-Encoding: nonce\0".getBytes(StandardCharsets.US_ASCII), 12);
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(cek, "AES"), new GCMParameterSpec(128, nonce));
      byte[] padded = Arrays.copyOf(plaintext, plaintext.length + 1);
      padded[plaintext.length] = 2;
      byte[] ciphertext = cipher.doFinal(padded);
      ByteBuffer out = ByteBuffer.allocate(16 + 4 + 1 + asPublicBytes.length + ciphertext.length);
      out.put(salt).putInt(RECORD_SIZE).put((byte) asPublicBytes.length).put(asPublicBytes).put(ciphertext);
      return out.array();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Web Push encryption failed: " + e.getMessage(), e);
    }
  }

  static byte[] hmac(byte[] key, byte[] data) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(data);
  }

  /** HKDF-Expand for one block (every length here is at most 32 bytes). */
  private static byte[] expand(byte[] prk, byte[] info, int length) throws GeneralSecurityException {
    return Arrays.copyOf(hmac(prk, concat(info, new byte[] {1})), length);
  }

  private static byte[] concat(byte[]... parts) {
    int length = 0;
    for (byte[] p : parts) {
      length += p.length;
    }
    ByteBuffer out = ByteBuffer.allocate(length);
    for (byte[] p : parts) {
      out.put(p);
    }
    return out.array();
  }
}
