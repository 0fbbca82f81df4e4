import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.solr.client.solrj.embedded.SSLConfig;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Runs one real Solr node (Jetty + SolrDispatchFilter, as Solr's own server does) from a solr
 * home, on 127.0.0.1:PORT under the /solr context, until the JVM is told to stop (SIGTERM).
 * JettySolrRunner binds its connector to 127.0.0.1 only. SolrCloud with an embedded ZooKeeper
 * needs no code here: the -DzkRun system property and a solr.xml with a solrcloud section do it.
 *
 * With -Dnavd.solr.keystore=FILE (PKCS12: the server's key and certificate chain) it serves
 * HTTPS only; the keystore's password comes from the environment (NAVD_SOLR_KEYSTORE_PASSWORD),
 * never the command line, which every local user can read in /proc.
 *
 * Usage: java -cp classes:lib/* NavdSolr SOLR_HOME PORT
 */
public final class NavdSolr {
  private NavdSolr() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: NavdSolr SOLR_HOME PORT");
      System.exit(2);
    }
    Path home = Path.of(args[0]).toAbsolutePath();
    if (!Files.isRegularFile(home.resolve("solr.xml"))) {
      System.err.println("no solr.xml in " + home);
      System.exit(2);
    }
    int port = Integer.parseInt(args[1]);
    JettyConfig.Builder builder = JettyConfig.builder()
        .setPort(port)
        .setContext("/solr")
        .stopAtShutdown(true);
    String keystore = System.getProperty("navd.solr.keystore", "");
    if (!keystore.isEmpty()) {
      String password = System.getenv().getOrDefault("NAVD_SOLR_KEYSTORE_PASSWORD", "");
      // JettySolrRunner builds its TLS connector only in its "test mode" (otherwise plain http
      // and h2c whatever the SSLConfig says); the mode's other effects (a session id generator
      // Solr's API never uses, a classpath fallback for conf/ resources) do not matter here.
      System.setProperty("jetty.testMode", "true");
      // HTTP/1.1 over TLS: otherwise its ALPN offers h2 only, which Python's clients do not speak.
      builder.useOnlyHttp1(true).withSSLConfig(new SSLConfig(true, false, keystore, password, null, null));
    }
    JettyConfig config = builder.build();
    JettySolrRunner runner = new JettySolrRunner(home.toString(), config);
    try {
      runner.start();
    } catch (Exception e) {
      // A node whose CoreContainer failed (bad solr.xml, ZooKeeper port taken) would otherwise
      // keep Jetty's threads, and so the JVM, alive while answering nothing but 404.
      System.err.println("navd-solr: Solr did not start: " + e);
      System.err.flush();
      System.exit(1);
    }
    String scheme = keystore.isEmpty() ? "http" : "https";
    System.out.println("navd-solr: listening on " + scheme + "://127.0.0.1:" + runner.getLocalPort() + "/solr");
    System.out.flush();
    Thread.currentThread().join();
  }
}
