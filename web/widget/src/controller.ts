/**
 * What `window.Switchboard(...)` talks to: commands given before the widget is ready are kept and
 * run once it is; listeners of `on(name, fn)` get the widget's events (`message`, `open`, `close`).
 */
import type { Identity, Message } from './api';

export interface Commands {
  open(): void;
  close(): void;
  send(text: string): void;
  identify(identity: Identity): void;
}

export type Listener = (payload: unknown) => void;

export function createController() {
  let target: Commands | null = null;
  const queued: Array<(commands: Commands) => void> = [];
  const listeners = new Map<string, Set<Listener>>();
  const run = (command: (commands: Commands) => void) => (target ? command(target) : queued.push(command));
  return {
    /** The mounted widget takes the commands (the queued ones first). */
    attach(commands: Commands) {
      target = commands;
      for (const command of queued.splice(0)) command(commands);
    },
    emit(name: string, payload: unknown) {
      for (const listener of listeners.get(name) ?? []) {
        try {
          listener(payload);
        } catch (error) {
          console.error('Switchboard widget: a listener failed', error);
        }
      }
    },
    /** `window.Switchboard(command, ...args)`. */
    command(name: unknown, ...args: unknown[]): unknown {
      switch (name) {
        case 'open':
          return run((c) => c.open());
        case 'close':
          return run((c) => c.close());
        case 'send':
          if (typeof args[0] === 'string' && args[0].trim()) run((c) => c.send(args[0] as string));
          return undefined;
        case 'identify': {
          const given = (args[0] ?? {}) as Record<string, unknown>;
          const identity: Identity = {};
          for (const field of ['user_id', 'name', 'email', 'user_hash'] as const)
            if (typeof given[field] === 'string') identity[field] = given[field] as string;
          return run((c) => c.identify(identity));
        }
        case 'on':
        case 'off': {
          const [event, fn] = args;
          if (typeof event !== 'string' || typeof fn !== 'function') return undefined;
          let set = listeners.get(event);
          if (!set) listeners.set(event, (set = new Set()));
          if (name === 'on') set.add(fn as Listener);
          else set.delete(fn as Listener);
          return undefined;
        }
        default:
          console.warn(`Switchboard widget: unknown command ${String(name)}`);
          return undefined;
      }
    },
  };
}

export type Controller = ReturnType<typeof createController>;
export type { Message };
