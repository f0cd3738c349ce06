/**
 * A web deployment's widget: the snippet to paste into a website (GET …/deployments/{id}/widget),
 * a new key, and a live preview — this service's /widget.js loaded with the key in a sandboxed
 * frame (preview.html), as a customer's page would load it. The preview needs the console's own
 * origin among the deployment's allowed origins (the widget refuses other origins); one button
 * adds it. While the service has no widget script (/widget.js answers 404) the panel says so.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Loading, useAction, useLoad } from '../ui';

interface WidgetInfo {
  deployment_id: string;
  key: string;
  snippet: string;
  settings: { allowed_origins?: string[]; title?: string } & Record<string, unknown>;
}

type Script = 'checking' | 'ready' | 'missing' | { failed: string };

/** Whether this service serves the widget script (a HEAD of /widget.js). */
function useWidgetScript(): Script {
  const [state, setState] = useState<Script>('checking');
  useEffect(() => {
    const controller = new AbortController();
    fetch('/widget.js', { method: 'HEAD', cache: 'no-store', signal: controller.signal }).then(
      (response) =>
        setState(
          response.ok
            ? 'ready'
            : response.status === 404
              ? 'missing'
              : { failed: `/widget.js answered ${response.status}` },
        ),
      (error: unknown) => {
        if (!controller.signal.aborted) setState({ failed: `/widget.js could not be read: ${String(error)}` });
      },
    );
    return () => controller.abort();
  }, []);
  return state;
}

export function WidgetPanel(props: { deploymentId: string; status: string; onClose: () => void }) {
  const info = useLoad(
    (signal) => api<WidgetInfo>(`/api/public/deployments/${props.deploymentId}/widget`, { signal }),
    [props.deploymentId],
  );
  const script = useWidgetScript();
  const action = useAction();
  const [copied, setCopied] = useState(false);
  const origin = location.origin;
  const origins = info.data?.settings.allowed_origins ?? [];
  const allowed = origins.includes(origin) || origins.includes('*');

  const allowConsole = () =>
    void action.run(async () => {
      const deployment = await api<{ config: string }>(`/api/public/deployments/${props.deploymentId}`);
      const config = JSON.parse(deployment.config || '{}') as { widget?: { allowed_origins?: string[] } };
      const widget = config.widget ?? {};
      const next = { ...config, widget: { ...widget, allowed_origins: [...(widget.allowed_origins ?? []), origin] } };
      await api(`/api/public/deployments/${props.deploymentId}`, {
        method: 'PUT',
        body: { config: JSON.stringify(next) },
      });
      info.reload();
    });
  const rotate = () =>
    void action.run(async () => {
      if (
        !confirm('Make a new key? Pages with the current snippet stop showing the widget until you paste the new one.')
      )
        return;
      await api(`/api/public/deployments/${props.deploymentId}/widget/rotate`, { method: 'POST', body: {} });
      info.reload();
    });
  const copy = () =>
    void action.run(async () => {
      await navigator.clipboard.writeText(info.data!.snippet);
      setCopied(true);
    });

  const version = info.data ? (/[?&]v=([^"&]+)/.exec(info.data.snippet)?.[1] ?? '') : '';
  return (
    <section class="card" aria-labelledby="widget-title">
      <header class="detail-header">
        <h2 id="widget-title">Website widget</h2>
        <div class="page-actions">
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      </header>
      {info.loading && !info.data ? <Loading what="the widget" /> : null}
      <ErrorNote error={info.error ?? action.error} />
      {info.data ? (
        <>
          <p>Paste this into the pages of your website, before the closing &lt;/body&gt; tag:</p>
          <pre class="pre snippet">
            <code>{info.data.snippet}</code>
          </pre>
          <div class="form-actions">
            <button type="button" onClick={copy}>
              {copied ? 'Copied' : 'Copy the snippet'}
            </button>
            <button type="button" class="secondary" disabled={action.pending} onClick={rotate}>
              Make a new key
            </button>
          </div>
          <p class="muted">
            Allowed websites: {origins.length ? origins.join(', ') : 'none yet'} (the deployment's{' '}
            <code>config.widget.allowed_origins</code>).
          </p>
          <h3>Preview</h3>
          {props.status !== 'active' ? (
            <p class="note">The deployment is {props.status}: the widget shows, but answers only once it is active.</p>
          ) : null}
          {script === 'checking' ? <Loading what="the widget script" /> : null}
          {script === 'missing' ? (
            <p class="note" role="status">
              This service does not serve the widget script yet (/widget.js answered 404), so there is nothing to
              preview. The snippet above already works: the widget appears once the script is built with the service.
            </p>
          ) : null}
          {typeof script === 'object' ? <ErrorNote error={script.failed} /> : null}
          {script === 'ready' && !allowed ? (
            <div class="note">
              <p>The preview runs on this console's address, {origin}, which this widget does not accept yet.</p>
              <button type="button" class="primary" disabled={action.pending} onClick={allowConsole}>
                Allow {origin} for the preview
              </button>
            </div>
          ) : null}
          {script === 'ready' && allowed ? (
            <iframe
              class="preview-frame"
              title="Widget preview"
              sandbox="allow-scripts allow-same-origin allow-forms allow-popups"
              referrerpolicy="no-referrer"
              src={`/console/preview.html#${new URLSearchParams({ key: info.data.key, v: version }).toString()}`}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}
