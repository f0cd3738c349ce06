/**
 * The widget's view: a launcher and its panel (a modal dialog with a focus trap), or the panel
 * alone filling a container or the page (`data-mode="page"`). Messages in a log (a polite live
 * region, busy while an answer streams), Markdown answers with their citations as links, tool
 * activity and the hand-off state in a status line, the greeting, light/dark, left/right, RTL.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Api, Identity, WidgetInfo } from './api';
import type { Controller } from './controller';
import { useConversation, type ShownMessage } from './conversation';
import { Markdown, safeUrl } from './markdown';
import type { Store } from './store';
import { stringsFor, type Strings } from './strings';

export interface AppProps {
  api: Api;
  store: Store;
  info: WidgetInfo;
  mode: 'float' | 'page';
  controller: Controller;
}

const FOCUSABLE = 'a[href],button:not([disabled]),textarea:not([disabled]),[tabindex]:not([tabindex="-1"])';

function Bubble({ message, t }: { message: ShownMessage; t: Strings }) {
  const who = message.role === 'user' ? t.you : message.role === 'human' ? t.person : t.assistant;
  const links = (message.citations ?? []).filter(
    (citation, index, all) => all.findIndex((other) => other.document_id === citation.document_id) === index,
  );
  return (
    <div class={`msg ${message.role}`}>
      <span class="who">{who}</span>
      {message.role === 'user' ? (
        <div>{message.content}</div>
      ) : (
        <div>
          <Markdown text={message.content || (message.partial ? '…' : '')} citations={message.citations ?? []} />
        </div>
      )}
      {message.failed ? <p role="alert">{t.failed}</p> : null}
      {links.length && !message.partial ? (
        <ul class="sources" aria-label={t.sources}>
          {links.map((citation) => {
            const url = citation.url ? safeUrl(citation.url) : null;
            return (
              <li key={citation.document_id}>
                {url ? (
                  <a href={url} target="_blank" rel="noopener noreferrer">
                    {citation.title}
                  </a>
                ) : (
                  citation.title
                )}
              </li>
            );
          })}
        </ul>
      ) : null}
    </div>
  );
}

const ICON = 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z';

export function App({ api, store, info, mode, controller }: AppProps) {
  const t = stringsFor(info.language);
  const page = mode === 'page';
  const [open, setOpen] = useState(page);
  const [draft, setDraft] = useState('');
  const c = useConversation(api, store, controller.emit);
  const panel = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const launcher = useRef<HTMLButtonElement>(null);
  const log = useRef<HTMLDivElement>(null);
  const openRef = useRef(open);
  openRef.current = open;

  const show = (value: boolean) => {
    if (page) return;
    setOpen(value);
    controller.emit(value ? 'open' : 'close', null);
    if (!value) setTimeout(() => launcher.current?.focus(), 0);
  };

  useEffect(() => {
    controller.attach({
      open: () => show(true),
      close: () => show(false),
      send: (text: string) => {
        show(true);
        void c.send(text);
      },
      identify: (identity: Identity) => void c.identify(identity),
    });
  }, []);

  useEffect(() => {
    if (open) {
      c.clearUnread();
      if (!page) input.current?.focus();
    }
  }, [open]);

  useEffect(() => {
    if (openRef.current) c.clearUnread();
  }, [c.unread]);

  useLayoutEffect(() => {
    const element = log.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [c.messages, open]);

  const submit = (event: Event) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text || c.busy || !info.available) return;
    setDraft('');
    void c.send(text);
  };

  /** Escape closes; Tab stays inside the open panel. */
  const onKeyDown = (event: KeyboardEvent) => {
    if (page) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      show(false);
      return;
    }
    if (event.key !== 'Tab' || !panel.current) return;
    const items = Array.from(panel.current.querySelectorAll<HTMLElement>(FOCUSABLE));
    if (!items.length) return;
    const root = panel.current.getRootNode() as ShadowRoot;
    const active = root.activeElement;
    const first = items[0]!;
    const last = items[items.length - 1]!;
    if (event.shiftKey && (active === first || !panel.current.contains(active))) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || !panel.current.contains(active))) {
      event.preventDefault();
      first.focus();
    }
  };

  const status = !info.available
    ? t.unavailable
    : c.handoff === 'handoff'
      ? t.waiting
      : c.handoff === 'assigned'
        ? t.assigned
        : c.handoff === 'closed'
          ? t.closed
          : c.activity?.kind === 'tool'
            ? `${c.activity.status === 'ok' ? t.toolDone : t.toolFailed}${c.activity.summary}`
            : c.activity?.kind === 'thinking'
              ? t.thinking
              : (c.error ?? '');
  const handoffShown = info.available && c.handoff !== 'bot';
  const theme = info.theme === 'dark' ? 'dark' : info.theme === 'light' ? 'light' : 'auto';
  const classes = `root ${page ? 'page' : 'float'} ${info.position === 'bottom-left' ? 'left' : 'right'} ${theme}`;

  return (
    <div class={classes} dir={info.direction} lang={info.language}>
      {!page ? (
        <button
          ref={launcher}
          type="button"
          class="launcher"
          aria-label={open ? t.close : t.open}
          aria-expanded={open}
          aria-controls="sb-panel"
          onClick={() => show(!open)}
        >
          <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path d={ICON} />
          </svg>
          {c.unread && !open ? <span class="badge" title={t.unread} /> : null}
        </button>
      ) : null}
      {open ? (
        <div
          id="sb-panel"
          ref={panel}
          class="panel"
          role={page ? 'region' : 'dialog'}
          aria-modal={page ? undefined : 'true'}
          aria-labelledby="sb-title"
          onKeyDown={onKeyDown}
        >
          <header>
            <h2 id="sb-title">{info.title}</h2>
            {!page ? (
              <button type="button" class="x" aria-label={t.close} onClick={() => show(false)}>
                <span aria-hidden="true">×</span>
              </button>
            ) : null}
          </header>
          <div ref={log} class="log" role="log" aria-live="polite" aria-label={t.conversation} aria-busy={c.busy}>
            {info.greeting ? (
              <div class="msg assistant greeting">
                <span class="who">{t.assistant}</span>
                <div>
                  <Markdown text={info.greeting} />
                </div>
              </div>
            ) : null}
            {c.messages.map((message) => (
              <Bubble key={message.id} message={message} t={t} />
            ))}
          </div>
          <div class={`status${handoffShown ? ' handoff' : ''}`} role="status">
            {status}
          </div>
          <form onSubmit={submit}>
            <label class="sr" for="sb-input">
              {t.message}
            </label>
            <textarea
              id="sb-input"
              ref={input}
              rows={1}
              maxLength={4000}
              placeholder={info.placeholder}
              value={draft}
              disabled={!info.available || c.handoff === 'closed'}
              onInput={(event) => setDraft((event.currentTarget as HTMLTextAreaElement).value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) submit(event);
              }}
            />
            <button type="submit" class="send" disabled={c.busy || !draft.trim() || !info.available}>
              {t.send}
            </button>
          </form>
        </div>
      ) : null}
    </div>
  );
}
