package dev.impipe.bench;

/** Entry point of {@code bin/im bench SCENARIO}. */
public final class BenchMain {

  private BenchMain() {}

  public static void main(String[] args) {
    System.err.println("im bench: not implemented yet");
    System.exit(2);
  }
}
