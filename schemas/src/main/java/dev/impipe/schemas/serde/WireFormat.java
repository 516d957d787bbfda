package dev.impipe.schemas.serde;

/** Confluent wire format: magic byte 0, 4-byte big-endian schema id, then the Avro binary body. */
public final class WireFormat {
  public static final byte MAGIC_BYTE = 0;
  public static final int HEADER_SIZE = 5;

  private WireFormat() {}
}
