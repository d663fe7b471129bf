// A throwaway self-signed certificate and key (PEM) made by openssl: TLS contexts and servers in
// tests need real ones.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function selfSigned(name: string, ip?: string): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "syncward-cert-"));
  const [key, cert] = [join(dir, "key"), join(dir, "cert")];
  const san = ip ? ["-addext", `subjectAltName=IP:${ip}`] : [];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      `/CN=${name}`,
      ...san,
    ]),
    { stdio: "ignore" },
  );
  return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}
