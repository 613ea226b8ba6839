// NATS_URL may carry credentials (nats://user:password@host, or a token:
// nats://token@host). The client takes them as connect options, not in the address
// (natsConnectOptions splits them off). Whatever the process writes (log lines, the ready line, errors on
// stderr) shows the user and hides the secret: nats://user:***@host, nats://***@host.
// Applied to whole lines rather than to the setting alone, so a URL quoted inside an
// error message from the NATS client is hidden too.

/** scheme://userinfo@ where userinfo has no '/', '@', space or quote. */
const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)([^\s/@"'<>]+)@/gi;

/** `text` with the password (or token) of every URL replaced by ***. */
export function redactCredentials(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(USERINFO, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon < 0 ? `${scheme}***@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}

/** The connect options of a NATS_URL: the address without its userinfo, and the user and password (or the token) from it, %-decoded. */
export function natsConnectOptions(url: string): { servers: string; user?: string; pass?: string; token?: string } {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^\s/@]+)@(.*)$/i.exec(url);
  if (match === null) return { servers: url };
  const [, scheme, userinfo, rest] = match as unknown as [string, string, string, string];
  const servers = `${scheme}${rest}`;
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { servers, token: decodeURIComponent(userinfo) };
  return { servers, user: decodeURIComponent(userinfo.slice(0, colon)), pass: decodeURIComponent(userinfo.slice(colon + 1)) };
}
