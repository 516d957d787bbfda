package dev.impipe.notify.provider;

import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECFieldFp;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.util.Arrays;

/**
 * P-256 keys as the Web Push RFCs write them: a public key is the 65-byte uncompressed point ({@code 0x04 || x || y}),
 * a private key the 32-byte scalar. The JDK has no public API to derive a public key from a private one, so
 * {@link #publicKeyOf} multiplies the generator by the scalar (once per key load, not per message).
 */
public final class EcKeys {

  /** The curve's parameters (secp256r1), from the JDK's provider. */
  public static final ECParameterSpec P256 = p256();

  private EcKeys() {}

  private static ECParameterSpec p256() {
    try {
      AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
      params.init(new ECGenParameterSpec("secp256r1"));
      return params.getParameterSpec(ECParameterSpec.class);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK has no P-256", e);
    }
  }

  /** The 65-byte uncompressed encoding of {@code key}'s point. */
  public static byte[] uncompressed(ECPublicKey key) {
    return uncompressed(key.getW());
  }

  static byte[] uncompressed(ECPoint w) {
    byte[] out = new byte[65];
    out[0] = 4;
    copyFixed(w.getAffineX(), out, 1);
    copyFixed(w.getAffineY(), out, 33);
    return out;
  }

  private static void copyFixed(BigInteger v, byte[] out, int offset) {
    byte[] b = v.toByteArray();
    int len = Math.min(b.length, 32);
    System.arraycopy(b, b.length - len, out, offset + 32 - len, len);
  }

  /** A public key from its 65-byte uncompressed encoding; throws IllegalArgumentException when it is not one. */
  public static ECPublicKey publicKey(byte[] uncompressed) {
    if (uncompressed.length != 65 || uncompressed[0] != 4) {
      throw new IllegalArgumentException("not an uncompressed P-256 point (65 bytes starting with 0x04)");
    }
    BigInteger x = new BigInteger(1, Arrays.copyOfRange(uncompressed, 1, 33));
    BigInteger y = new BigInteger(1, Arrays.copyOfRange(uncompressed, 33, 65));
    try {
      return (ECPublicKey) KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(new ECPoint(x, y), P256));
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("not a P-256 public key: " + e.getMessage(), e);
    }
  }

  /** A private key from its 32-byte scalar. */
  public static ECPrivateKey privateKey(byte[] scalar) {
    try {
      return (ECPrivateKey) KeyFactory.getInstance("EC")
          .generatePrivate(new ECPrivateKeySpec(new BigInteger(1, scalar), P256));
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("not a P-256 private key: " + e.getMessage(), e);
    }
  }

  /** The public key of {@code key}: the generator times the private scalar. */
  public static ECPublicKey publicKeyOf(ECPrivateKey key) {
    ECPoint w = multiply(P256.getGenerator(), key.getS());
    try {
      return (ECPublicKey) KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(w, P256));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static ECPoint multiply(ECPoint point, BigInteger k) {
    ECPoint result = ECPoint.POINT_INFINITY;
    ECPoint addend = point;
    for (int i = 0; i < k.bitLength(); i++) {
      if (k.testBit(i)) {
        result = add(result, addend);
      }
      addend = add(addend, addend);
    }
    return result;
  }

  private static ECPoint add(ECPoint a, ECPoint b) {
    if (a.equals(ECPoint.POINT_INFINITY)) {
      return b;
    }
    if (b.equals(ECPoint.POINT_INFINITY)) {
      return a;
    }
    BigInteger p = ((ECFieldFp) P256.getCurve().getField()).getP();
    BigInteger lambda;
    if (a.getAffineX().equals(b.getAffineX())) {
      if (!a.getAffineY().equals(b.getAffineY()) || a.getAffineY().signum() == 0) {
        return ECPoint.POINT_INFINITY;
      }
      BigInteger x2 = a.getAffineX().pow(2).multiply(BigInteger.valueOf(3)).add(P256.getCurve().getA());
      lambda = x2.multiply(a.getAffineY().shiftLeft(1).modInverse(p)).mod(p);
    } else {
      lambda = b.getAffineY().subtract(a.getAffineY())
          .multiply(b.getAffineX().subtract(a.getAffineX()).modInverse(p)).mod(p);
    }
    BigInteger x = lambda.pow(2).subtract(a.getAffineX()).subtract(b.getAffineX()).mod(p);
    BigInteger y = lambda.multiply(a.getAffineX().subtract(x)).subtract(a.getAffineY()).mod(p);
    return new ECPoint(x, y);
  }
}
