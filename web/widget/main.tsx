/**
 * The web widget: `<script src="{base}/widget.js?v=…" data-key="pk_…" async></script>`. Finds its
 * own script tag, asks the service for the widget's settings (a page from an origin the widget
 * does not allow gets a 403 and no widget), then renders Preact inside a shadow root so the
 * page's CSS never reaches in. `data-mode="page"` fills the page; `data-container="#id"` fills
 * that element. `window.Switchboard(command, ...args)`: identify, open, close, send, on, off.
 */
import { render } from 'preact';
import { createApi, type WidgetInfo } from './src/api';
import { App } from './src/app';
import { createController } from './src/controller';
import { createStore } from './src/store';
import { CSS } from './src/styles';

type Queue = { q?: ArrayLike<unknown>[] };
type Global = typeof window & { Switchboard?: ((...args: unknown[]) => unknown) & Queue & { loaded?: boolean } };

function ownScript(): HTMLScriptElement | null {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement && current.dataset.key) return current;
  const all = document.querySelectorAll<HTMLScriptElement>('script[data-key][src*="widget.js"]');
  return all[all.length - 1] ?? null;
}

/** Black or white text, whichever reads better on the accent colour. */
function onAccent(color: string): string {
  let hex = color.replace('#', '');
  if (hex.length === 3) hex = hex.replace(/./g, '$&$&');
  const channel = (i: number) => {
    const value = parseInt(hex.slice(i, i + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : Math.pow((value + 0.055) / 1.055, 2.4);
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
  return luminance > 0.179 ? '#111827' : '#ffffff';
}

/** The host element: styles set through the CSSOM with !important, which no page rule overrides. */
function host(container: Element | null, page: boolean): HTMLElement {
  const element = document.createElement('switchboard-widget');
  const style = (name: string, value: string) => element.style.setProperty(name, value, 'important');
  style('all', 'initial');
  if (container) {
    style('display', 'block');
    style('width', '100%');
    style('height', '100%');
    container.appendChild(element);
  } else if (page) {
    style('display', 'block');
    style('position', 'fixed');
    style('inset', '0');
    style('z-index', '2147483000');
    document.body.appendChild(element);
  } else {
    style('display', 'block');
    style('position', 'static');
    style('width', '0');
    style('height', '0');
    document.body.appendChild(element);
  }
  return element;
}

function adopt(root: ShadowRoot) {
  // A constructed stylesheet is not an inline style: a strict style-src does not refuse it.
  if ('adoptedStyleSheets' in Document.prototype && 'replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } else {
    const style = document.createElement('style');
    style.textContent = CSS;
    root.appendChild(style);
  }
}

async function start() {
  const global = window as Global;
  if (global.Switchboard?.loaded) return;
  const script = ownScript();
  const key = script?.dataset.key;
  if (!script || !key) {
    console.warn('Switchboard widget: no data-key on the widget script tag');
    return;
  }
  const controller = createController();
  const queued = Array.from(global.Switchboard?.q ?? []);
  const command = Object.assign((...args: unknown[]) => controller.command(args[0], ...args.slice(1)), {
    loaded: true,
  });
  global.Switchboard = command;
  for (const args of queued) controller.command(args[0], ...Array.from(args).slice(1));

  const base = new URL(script.src, location.href).origin;
  const api = createApi(base, key);
  let info: WidgetInfo;
  try {
    info = await api.info();
  } catch (error) {
    console.warn(`Switchboard widget: not shown (${(error as Error).message})`);
    return;
  }
  const selector = script.dataset.container;
  const container = selector ? document.querySelector(selector) : null;
  const page = script.dataset.mode === 'page' || container !== null;
  const element = host(container, page);
  const root = element.attachShadow({ mode: 'open' });
  adopt(root);
  const mount = document.createElement('div');
  mount.style.setProperty('--sb-accent', info.color);
  mount.style.setProperty('--sb-on-accent', onAccent(info.color));
  if (page) mount.style.setProperty('height', '100%');
  root.appendChild(mount);
  render(
    <App api={api} store={createStore(key)} info={info} mode={page ? 'page' : 'float'} controller={controller} />,
    mount,
  );
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => void start());
else void start();
