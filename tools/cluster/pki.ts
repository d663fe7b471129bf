// Certificates for the local control plane, made with openssl: one CA, a serving cert for the
// API server, an admin client cert in system:masters, and a key pair that signs service-account tokens.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? String(err);
    throw new Error(
      `openssl ${args[0]} failed: ${stderr.trim()}. Install openssl (apt-get install openssl) and retry.`,
    );
  }
}

function signedCert(dir: string, name: string, subject: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(["genrsa", "-out", `${name}.key`, "2048"], dir);
  openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "365",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    ],
    dir,
  );
}

export function makePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true });
  const pki: Pki = {
    dir,
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serverCert: join(dir, "server.crt"),
    serverKey: join(dir, "server.key"),
    adminCert: join(dir, "admin.crt"),
    adminKey: join(dir, "admin.key"),
    saKey: join(dir, "sa.key"),
    saPub: join(dir, "sa.pub"),
  };
  if (existsSync(pki.adminCert) && existsSync(pki.saPub)) return pki;
  openssl(["genrsa", "-out", "ca.key", "2048"], dir);
  openssl(
    [
      "req",
      "-x509",
      "-new",
      "-nodes",
      "-key",
      "ca.key",
      "-subj",
      "/CN=syncward-local-ca",
      "-days",
      "365",
      "-out",
      "ca.crt",
    ],
    dir,
  );
  signedCert(
    dir,
    "server",
    "/CN=kube-apiserver",
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth,clientAuth",
      "subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.0.0.1",
      "",
    ].join("\n"),
  );
  signedCert(
    dir,
    "admin",
    "/O=system:masters/CN=syncward-admin",
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=digitalSignature,keyEncipherment",
      "extendedKeyUsage=clientAuth",
      "",
    ].join("\n"),
  );
  openssl(["genrsa", "-out", "sa.key", "2048"], dir);
  openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
  return pki;
}
