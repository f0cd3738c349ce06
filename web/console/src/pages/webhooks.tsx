/**
 * Webhooks (DESIGN §14): endpoints that receive the company's events signed the Standard Webhooks
 * way; create one (its secret shown once), pause or resume it, rotate its secret, send a test,
 * read its deliveries and retry one.
 */
import { useState } from 'preact/hooks';
import { api, type Me, type Page } from '../api';
import { Empty, ErrorNote, Field, Loading, PageHeader, useAction, useLoad, when } from '../ui';

interface Webhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
}

interface EventType {
  type: string;
  description: string;
}

interface Delivery {
  id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: { at: string; response_status: number | null; latency_ms: number | null; error: string | null }[];
  next_attempt_at: string | null;
  created_at: string;
}

const canWrite = (me: Me) => me.role === 'owner' || me.role === 'admin' || me.role === 'developer';

export function WebhooksPage({ me, selected }: { me: Me; selected?: string }) {
  const data = useLoad(async (signal) => {
    const [webhooks, types] = await Promise.all([
      api<Webhook[]>('/api/public/webhooks', { signal }),
      api<EventType[]>('/api/public/webhooks/event-types', { signal }),
    ]);
    return { webhooks, types: types.filter((t) => t.type !== 'webhook.test') };
  });
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [open, setOpen] = useState<string | null>(selected ?? null);
  const action = useAction();
  const writer = canWrite(me);
  const run = (work: () => Promise<void>) =>
    void action.run(async () => {
      await work();
      data.reload();
    });
  return (
    <section>
      <PageHeader title="Webhooks" />
      <p class="muted">
        Your systems hear what happens here: each event is POSTed as JSON and signed the Standard Webhooks way (
        <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>), retried for about a
        day until it succeeds.
      </p>
      {data.loading && !data.data ? <Loading what="webhooks" /> : null}
      <ErrorNote error={data.error} />
      {secret ? (
        <div class="secret" role="status">
          <strong>{secret.label}</strong> It is shown only now: keep it where your receiver reads it.
          <code>{secret.value}</code>
          <button type="button" onClick={() => setSecret(null)}>
            I have kept it
          </button>
        </div>
      ) : null}
      {data.data && writer ? (
        <CreateWebhook
          types={data.data.types}
          onCreated={(created) => {
            setSecret({ label: `The signing secret of ${created.url}.`, value: created.secret });
            data.reload();
          }}
        />
      ) : null}
      <ErrorNote error={action.error} />
      {data.data && data.data.webhooks.length === 0 ? (
        <Empty title="No webhook endpoints">
          <p>
            {writer
              ? 'Add the address of your receiver above and choose the events it wants; then send it a test.'
              : 'A developer or administrator adds endpoints.'}
          </p>
        </Empty>
      ) : null}
      {data.data && data.data.webhooks.length > 0 ? (
        <ul class="list" aria-label="Webhook endpoints">
          {data.data.webhooks.map((hook) => (
            <li key={hook.id} class={open === hook.id ? 'selected' : ''}>
              <div>
                <strong class="snippet">{hook.url}</strong>
                {hook.description ? <p dir="auto">{hook.description}</p> : null}
                <p class="muted">
                  {hook.events.join(', ')} ·{' '}
                  <span class={`badge ${hook.enabled ? 'active' : 'failed'}`}>
                    {hook.enabled ? 'enabled' : 'disabled'}
                  </span>
                  {hook.disabled_reason ? <span class="error-inline"> {hook.disabled_reason}</span> : null}
                  {hook.previous_secret_expires_at
                    ? ` · the previous secret works until ${when(hook.previous_secret_expires_at)}`
                    : null}
                </p>
              </div>
              <div class="page-actions">
                <button
                  type="button"
                  aria-label={`Deliveries of ${hook.url}`}
                  aria-expanded={open === hook.id}
                  onClick={() => setOpen(open === hook.id ? null : hook.id)}
                >
                  Deliveries
                </button>
                {writer ? (
                  <>
                    <button
                      type="button"
                      aria-label={`Send a test to ${hook.url}`}
                      disabled={action.pending}
                      onClick={() =>
                        run(async () => {
                          await api(`/api/public/webhooks/${hook.id}/test`, { method: 'POST', body: {} });
                          setOpen(hook.id);
                        })
                      }
                    >
                      Send a test
                    </button>
                    <button
                      type="button"
                      aria-label={`${hook.enabled ? 'Disable' : 'Enable'} ${hook.url}`}
                      disabled={action.pending}
                      onClick={() =>
                        run(async () => {
                          await api(`/api/public/webhooks/${hook.id}`, {
                            method: 'PATCH',
                            body: { enabled: !hook.enabled },
                          });
                        })
                      }
                    >
                      {hook.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <button
                      type="button"
                      aria-label={`Rotate secret of ${hook.url}`}
                      disabled={action.pending}
                      onClick={() =>
                        run(async () => {
                          const rotated = await api<{ secret: string }>(
                            `/api/public/webhooks/${hook.id}/rotate-secret`,
                            {
                              method: 'POST',
                              body: {},
                            },
                          );
                          setSecret({ label: `The new signing secret of ${hook.url}.`, value: rotated.secret });
                        })
                      }
                    >
                      Rotate secret
                    </button>
                    <button
                      type="button"
                      class="danger"
                      aria-label={`Delete ${hook.url}`}
                      disabled={action.pending}
                      onClick={() => {
                        if (confirm(`Delete the endpoint ${hook.url} and its deliveries?`))
                          run(async () => {
                            await api(`/api/public/webhooks/${hook.id}`, { method: 'DELETE' });
                          });
                      }}
                    >
                      Delete
                    </button>
                  </>
                ) : null}
              </div>
              {open === hook.id ? <Deliveries webhook={hook} writer={writer} /> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function CreateWebhook(props: { types: EventType[]; onCreated: (created: Webhook & { secret: string }) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (events.length === 0) throw new Error('Choose at least one event.');
      const created = await api<Webhook & { secret: string }>('/api/public/webhooks', {
        method: 'POST',
        body: { url, events, ...(description.trim() ? { description: description.trim() } : {}) },
      });
      setUrl('');
      setDescription('');
      setEvents([]);
      props.onCreated(created);
    });
  };
  return (
    <form class="card form" onSubmit={submit} aria-label="Add a webhook endpoint">
      <h2>Add an endpoint</h2>
      <div class="row">
        <Field label="URL" hint="https://… of your receiver">
          <input type="url" value={url} required maxLength={2048} onInput={(e) => setUrl(e.currentTarget.value)} />
        </Field>
        <Field label="Description">
          <input
            value={description}
            maxLength={500}
            dir="auto"
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </Field>
      </div>
      <fieldset class="segmented wrap">
        <legend>Events</legend>
        {props.types.map((type) => (
          <label key={type.type} title={type.description}>
            <input
              type="checkbox"
              checked={events.includes(type.type)}
              onChange={(e) =>
                setEvents(
                  e.currentTarget.checked ? [...events, type.type] : events.filter((name) => name !== type.type),
                )
              }
            />{' '}
            {type.type}
          </label>
        ))}
      </fieldset>
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.pending}>
        {action.pending ? 'Adding…' : 'Add endpoint'}
      </button>
    </form>
  );
}

function Deliveries({ webhook, writer }: { webhook: Webhook; writer: boolean }) {
  const list = useLoad(
    (signal) => api<Page<Delivery>>(`/api/public/webhooks/${webhook.id}/deliveries?limit=50`, { signal }),
    [webhook.id],
  );
  const action = useAction();
  return (
    <section class="deliveries" aria-label={`Deliveries of ${webhook.url}`}>
      <div class="detail-header">
        <h2>Deliveries</h2>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      {list.loading && !list.data ? <Loading what="deliveries" /> : null}
      <ErrorNote error={list.error ?? action.error} />
      {list.data && list.data.data.length === 0 ? <p>Nothing sent yet. Send a test to see one.</p> : null}
      {list.data && list.data.data.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Deliveries of {webhook.url}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((delivery) => {
                const last = delivery.attempts.at(-1);
                return (
                  <tr key={delivery.id}>
                    <td>{delivery.event_type}</td>
                    <td>
                      <span class={`badge delivery ${delivery.status}`}>{delivery.status}</span>
                    </td>
                    <td>
                      {last
                        ? `${when(last.at)} · ${last.response_status ?? 'no answer'}${
                            last.latency_ms !== null ? ` · ${last.latency_ms} ms` : ''
                          }${last.error ? ` · ${last.error}` : ''}`
                        : 'not yet'}
                      {delivery.attempts.length > 1 ? ` (${delivery.attempts.length} attempts)` : ''}
                    </td>
                    <td>{when(delivery.next_attempt_at)}</td>
                    <td>
                      {writer && delivery.status !== 'pending' ? (
                        <button
                          type="button"
                          disabled={action.pending}
                          onClick={() =>
                            void action.run(async () => {
                              await api(`/api/public/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, {
                                method: 'POST',
                                body: {},
                              });
                              list.reload();
                            })
                          }
                        >
                          Send again
                        </button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
