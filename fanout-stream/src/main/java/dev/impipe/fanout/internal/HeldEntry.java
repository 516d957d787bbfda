package dev.impipe.fanout.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * An inbox entry a fan-out task holds back while a switch waits for the copy (its key, serialized value, timestamp
 * and headers), as stored in the task's held-entries store: pure codec.
 */
public record HeldEntry(String key, byte[] value, long timestamp, Headers headers) {

  public byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(key);
      out.writeLong(timestamp);
      writeBytes(out, value);
      Header[] all = headers.toArray();
      out.writeInt(all.length);
      for (Header h : all) {
        out.writeUTF(h.key());
        writeBytes(out, h.value());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  public static HeldEntry decode(byte[] encoded) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded))) {
      String key = in.readUTF();
      long timestamp = in.readLong();
      byte[] value = readBytes(in);
      int count = in.readInt();
      RecordHeaders headers = new RecordHeaders();
      for (int i = 0; i < count; i++) {
        headers.add(in.readUTF(), readBytes(in));
      }
      return new HeldEntry(key, value, timestamp, headers);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
    out.writeInt(b == null ? -1 : b.length);
    if (b != null) {
      out.write(b);
    }
  }

  private static byte[] readBytes(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return b;
  }
}
