/**
 * A real SMTP server (smtp-server) on port 0 for the SMTP connector: AUTH required (PLAIN/LOGIN,
 * allowed without TLS since STARTTLS is disabled here), the username and password checked, and
 * every accepted message kept with its envelope and raw text. `authAttempts` counts the sign-ins
 * tried (a client requiring TLS must never try one here).
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpPeer {
  host: string;
  port: number;
  username: string;
  password: string;
  received: ReceivedMail[];
  /** AUTH commands received (each carries the password, in clear without TLS). */
  readonly authAttempts: number;
  close(): Promise<void>;
}

export async function startSmtpPeer(username = 'mailer', password = 'smtp-peer-password-0042'): Promise<SmtpPeer> {
  const received: ReceivedMail[] = [];
  let authAttempts = 0;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      authAttempts += 1;
      if (auth.username === username && auth.password === password) return callback(null, { user: username });
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  return {
    host: '127.0.0.1',
    port,
    username,
    password,
    received,
    get authAttempts() {
      return authAttempts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
