import { stat } from "node:fs/promises";
import { installDebianPackages } from "../tools/debian-packages.js";
import { findOnPath, isExecutable } from "../tools/executables.js";

/**
 * nginx in front of the API replicas (D32). One public port serves REST, Connect and gRPC-Web over
 * HTTP/1.1 and gRPC over h2c. nginx 1.22 (Debian 12's) cannot serve both HTTP/1.1 and cleartext HTTP/2 on
 * one `http` listener (that came in 1.25.1), so the public port is a `stream` listener that reads the
 * first bytes of each connection (njs, Debian's libnginx-mod-stream-js): HTTP/2's preface goes to an h2c
 * listener that balances each gRPC call over HTTP/2 connections to the replicas, anything else to an
 * HTTP/1.1 listener that balances each request. Both are on loopback, reached through the PROXY protocol
 * so the client's own address travels to flowlog (D26's failed-authentication throttle is per address).
 */
export interface NginxPorts {
  /** The public port. */
  public: number;
  http1: number;
  h2c: number;
}

const modulesDir = "/usr/lib/nginx/modules";
const modules = ["ngx_stream_module.so", "ngx_stream_js_module.so"];
const packages = ["nginx", "libnginx-mod-stream", "libnginx-mod-stream-js"];

/** nginx with its stream and njs modules: installed from Debian's packages when missing. */
export async function resolveNginx(): Promise<string> {
  const present = async () =>
    (await findOnPath("nginx")) ?? ((await isExecutable("/usr/sbin/nginx")) ? "/usr/sbin/nginx" : undefined);
  const modulesPresent = async () =>
    (await Promise.all(modules.map((name) => isFile(`${modulesDir}/${name}`)))).every(Boolean);
  const nginx = await present();
  if (nginx && (await modulesPresent())) return nginx;
  await installDebianPackages(packages, "nginx with its stream and njs modules is not installed");
  const installed = await present();
  if (!installed || !(await modulesPresent())) {
    throw new Error(`nginx or its modules are still missing after apt-get install ${packages.join(" ")}`);
  }
  return installed;
}

function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}

/**
 * The njs handler: the first bytes of a connection name its listener. Kept to ES5, which every njs
 * version runs.
 */
export function nginxSniffer(ports: NginxPorts): string {
  return `// flowlog cluster: HTTP/2 with prior knowledge (h2c, what gRPC clients speak) opens with the
// preface "PRI * HTTP/2.0"; anything else is HTTP/1.x.
function sniff(s) {
  var head = "";
  s.on("upload", function (data, flags) {
    head += data;
    if (head.length < 3 && !flags.last) return;
    s.variables.flowlog_listener = head.substring(0, 3) === "PRI" ? "${ports.h2c}" : "${ports.http1}";
    s.done();
  });
}
export default { sniff };
`;
}

export function nginxConfig(options: {
  ports: NginxPorts;
  replicas: number[];
  dir: string;
  snifferFile: string;
}): string {
  const { ports, dir } = options;
  const servers = options.replicas
    .map((port) => `    server 127.0.0.1:${port} max_fails=1 fail_timeout=2s;`)
    .join("\n");
  return `# Written by flowlog cluster up (issue 16); rewritten at every start.
daemon off;
worker_processes 2;
pid ${dir}/nginx.pid;
error_log stderr warn;
${modules.map((name) => `load_module ${modulesDir}/${name};`).join("\n")}

events { worker_connections 4096; }

stream {
  js_import protocol from ${options.snifferFile};
  js_var $flowlog_listener ${ports.http1};
  server {
    listen 127.0.0.1:${ports.public};
    # D27: a new connection names its protocol within 5 s.
    preread_timeout 5s;
    js_preread protocol.sniff;
    proxy_pass 127.0.0.1:$flowlog_listener;
    proxy_protocol on;
  }
}

http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  # flowlog holds bodies to D26's 1 MiB after decompression itself; this only stops what is far over it.
  client_max_body_size 4m;
  set_real_ip_from 127.0.0.1;
  real_ip_header proxy_protocol;

  # Two upstreams over the same replicas: a kept-alive connection speaks HTTP/1.1 or HTTP/2, never both.
  # Each keeps its state in shared memory (zone), so a replica that failed once is passed over by every
  # nginx worker, not only by the one that saw it fail: without it, a killed replica fails one request
  # per worker and per client connection instead of one.
  upstream flowlog_http1 {
    zone flowlog_http1 64k;
${servers}
    keepalive 64;
  }
  upstream flowlog_h2c {
    zone flowlog_h2c 64k;
${servers}
    keepalive 64;
  }

  # REST, Connect and gRPC-Web: each request to a replica, another one when it cannot be reached or
  # answers 502 or 503 (unready: its store or Temporal is gone). A request already sent is not sent again.
  server {
    listen 127.0.0.1:${ports.http1} proxy_protocol;
    location / {
      proxy_pass http://flowlog_http1;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_protocol_addr;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_request_buffering off;
      # A sync execution may take up to D26's five minutes.
      proxy_read_timeout 310s;
    }
  }

  # gRPC over h2c: each call to a replica over HTTP/2.
  server {
    listen 127.0.0.1:${ports.h2c} http2 proxy_protocol;
    location / {
      grpc_pass grpc://flowlog_h2c;
      grpc_set_header X-Forwarded-For $proxy_protocol_addr;
      grpc_next_upstream error timeout http_502 http_503;
      grpc_read_timeout 310s;
    }
  }
}
`;
}
