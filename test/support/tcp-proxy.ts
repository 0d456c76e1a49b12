import net from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server, which a test can cut (the listener closes
 * and every connection through it is reset, as when the server goes away) and mend again on the
 * same port: an outage of a real server, without stopping the server other tests share.
 */
export interface TcpProxy {
  port: number;
  /** Resets every connection and refuses new ones until `mend`. */
  cut(): Promise<void>;
  mend(): Promise<void>;
  close(): Promise<void>;
}

async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const cut = async () => {
    const closed = new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    for (const socket of sockets) socket.resetAndDestroy();
    await closed;
  };
  return { port, cut, mend: () => listen(port), close: cut };
}

/** A proxy in front of a PostgreSQL test database, and the database's URL through it. */
export async function startDatabaseProxy(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const direct = new URL(databaseUrl);
  const proxy = await startTcpProxy(direct.hostname, Number(direct.port));
  const throughProxy = new URL(databaseUrl);
  throughProxy.hostname = '127.0.0.1';
  throughProxy.port = String(proxy.port);
  return { proxy, url: throughProxy.toString() };
}
