import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Runs one real Solr node (Jetty + SolrDispatchFilter, as Solr's own server does) from a solr
 * home, on 127.0.0.1:PORT under the /solr context, until the JVM is told to stop (SIGTERM).
 * JettySolrRunner binds its connector to 127.0.0.1 only. SolrCloud with an embedded ZooKeeper
 * needs no code here: the -DzkRun system property and a solr.xml with a solrcloud section do it.
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
    JettyConfig config = JettyConfig.builder()
        .setPort(port)
        .setContext("/solr")
        .stopAtShutdown(true)
        .build();
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
    System.out.println("navd-solr: listening on http://127.0.0.1:" + runner.getLocalPort() + "/solr");
    System.out.flush();
    Thread.currentThread().join();
  }
}
