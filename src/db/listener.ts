/**
 * A dedicated connection that LISTENs on channels and reconnects when it drops. `connected`
 * tells whether notifications can currently be trusted to arrive; each channel's handler also
 * runs when the connection is made or lost, without a payload (anything may have changed meanwhile).
 */
import pg from 'pg';

export interface Listener {
  readonly connected: boolean;
  close(): Promise<void>;
}

export function listen(
  connectionString: string,
  channels: Record<string, (payload?: string) => void>,
  onError: (error: Error) => void = () => undefined,
): Listener {
  let client: pg.Client | null = null;
  let connected = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const onNotify = () => {
    for (const handler of Object.values(channels)) handler();
  };

  const connect = async (attempt: number) => {
    if (closed) return;
    const next = new pg.Client({ connectionString, application_name: 'switchboard-listener' });
    next.on('notification', (message) => channels[message.channel]?.(message.payload));
    next.on('error', (error) => {
      onError(error);
      drop(attempt);
    });
    next.on('end', () => drop(attempt));
    try {
      await next.connect();
      for (const channel of Object.keys(channels)) await next.query(`listen ${pg.escapeIdentifier(channel)}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      connected = true;
      // Anything may have changed while we were not listening.
      onNotify();
    } catch (error) {
      onError(error as Error);
      await next.end().catch(() => undefined);
      drop(attempt + 1);
    }
  };

  const drop = (attempt: number) => {
    if (!connected && client === null && retry) return;
    connected = false;
    client = null;
    onNotify();
    if (closed) return;
    clearTimeout(retry);
    retry = setTimeout(() => void connect(attempt + 1), Math.min(5000, 100 * 2 ** attempt));
    retry.unref();
  };

  void connect(0);

  return {
    get connected() {
      return connected;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      connected = false;
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}
