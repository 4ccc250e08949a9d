import http2 from "node:http2";
import net from "node:net";

/** `count` requests sent at once as the streams of one HTTP/2 connection from `from`: their statuses. */
export async function h2Requests(
  url: string,
  from: string,
  count: number,
  { body, ...headers }: http2.OutgoingHttpHeaders & { body?: string },
): Promise<number[]> {
  const { hostname, port } = new URL(url);
  const session = http2.connect(url, {
    createConnection: () => net.connect({ host: hostname, port: Number(port), localAddress: from }),
  });
  try {
    return await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<number>((resolve, reject) => {
            const stream = session.request(headers);
            let status = 0;
            stream.on("response", (answer) => {
              status = Number(answer[":status"]);
            });
            stream.on("data", () => {});
            stream.on("close", () => resolve(status));
            stream.on("error", reject);
            // A GET's stream is ended by the request itself (Node's endStream).
            if (body === undefined) stream.end();
            else stream.end(body);
          }),
      ),
    );
  } finally {
    session.close();
  }
}
