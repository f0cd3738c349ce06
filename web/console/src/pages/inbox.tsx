/**
 * The inbox (DESIGN §13): conversations an agent handed to a person, kept live by the inbox's
 * events stream; a conversation with the customer's messages, and what a person does with it:
 * take over, assign, reply, release to the agent, close (resolving its support query).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, followEvents, query, type Me, type Page } from '../api';
import { Empty, ErrorNote, Field, go, Loading, PageHeader, useAction, useLoad, when } from '../ui';

type Status = 'bot' | 'handoff' | 'assigned' | 'closed';

interface Conversation {
  id: string;
  status: Status;
  channel: string;
  agent_id: string;
  assignee_id: string | null;
  support_query_id: string | null;
  user: string;
  created_at: string;
  updated_at: string;
}

interface Message {
  id: string;
  role: 'user' | 'assistant' | 'human';
  content: string;
  author_id: string | null;
  delivery_status: string | null;
  delivery_error: string | null;
  created_at: string;
}

interface ConversationDetail extends Conversation {
  title: string | null;
  handoff_reason: string | null;
  message_count: number;
  messages: Message[];
}

interface Member {
  role: string;
  user: { id: string; email: string; first_name: string; last_name: string };
}

const FILTERS: [value: Status | '', label: string][] = [
  ['handoff', 'Waiting'],
  ['assigned', 'Assigned'],
  ['bot', 'With the agent'],
  ['closed', 'Closed'],
  ['', 'All'],
];

const STATUS_TEXT: Record<Status, string> = {
  bot: 'with the agent',
  handoff: 'waiting for a person',
  assigned: 'assigned',
  closed: 'closed',
};

const canAct = (me: Me) => me.role === 'owner' || me.role === 'admin' || me.role === 'developer';

/** Calls `onChange` on each event of the inbox's stream (and after a reconnect), while mounted. */
function useInboxEvents(onChange: (conversationId: string | null) => void) {
  const latest = useRef(onChange);
  latest.current = onChange;
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    followEvents(
      '/api/public/conversations/events',
      {
        onEvent: (event) => {
          const data = event.data as { conversation_id?: string | null };
          latest.current(event.type === 'resync' ? null : (data.conversation_id ?? null));
        },
        onReconnect: () => latest.current(null),
        onError: () => setProblem('The live updates stopped; reload the page to see new conversations.'),
      },
      controller.signal,
    );
    return () => controller.abort();
  }, []);
  return problem;
}

export function InboxPage({ selected, me }: { selected?: string; me: Me }) {
  const [status, setStatus] = useState<Status | ''>('handoff');
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const list = useLoad(
    (signal) => api<Page<Conversation>>(`/api/public/conversations${query({ status, q, limit: 50 })}`, { signal }),
    [status, q],
  );
  const members = useLoad(
    (signal) => api<Page<Member>>('/api/public/companies/members?limit=100', { signal }).catch(() => null),
    [],
  );
  const [changed, setChanged] = useState<{ id: string | null; round: number }>({ id: null, round: 0 });
  const live = useInboxEvents((conversationId) => {
    list.reload();
    setChanged((previous) => ({ id: conversationId, round: previous.round + 1 }));
  });
  const people = members.data?.data ?? [];
  const nameOf = (userId: string | null) => {
    if (!userId) return 'nobody';
    if (userId === me.id) return 'you';
    const member = people.find((m) => m.user.id === userId);
    if (!member) return 'a former member';
    const name = `${member.user.first_name} ${member.user.last_name}`.trim();
    return name || member.user.email;
  };
  return (
    <section>
      <PageHeader title="Inbox">
        <form
          class="row"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setQ(search.trim());
          }}
        >
          <Field label="Search conversations">
            <input type="search" value={search} maxLength={200} onInput={(e) => setSearch(e.currentTarget.value)} />
          </Field>
        </form>
      </PageHeader>
      <div class="filters" role="group" aria-label="Show conversations">
        {FILTERS.map(([value, label]) => (
          <button key={label} type="button" aria-pressed={status === value} onClick={() => setStatus(value)}>
            {label}
          </button>
        ))}
      </div>
      <ErrorNote error={live} />
      <div class="split inbox">
        <div>
          {list.loading && !list.data ? <Loading what="conversations" /> : null}
          <ErrorNote error={list.error} />
          {list.data && list.data.data.length === 0 ? (
            <Empty title={status === 'handoff' ? 'Nobody is waiting for a person' : 'No conversations here'}>
              <p>
                When an agent hands a conversation over (its rule, the model's choice, or a customer asking for a
                person), it appears here at once. You can also take over any conversation from “With the agent”.
              </p>
            </Empty>
          ) : null}
          {list.data && list.data.data.length > 0 ? (
            <ul class="list conversations" aria-label="Conversations">
              {list.data.data.map((c) => (
                <li key={c.id} class={c.id === selected ? 'selected' : ''}>
                  <div>
                    <a href={`#/inbox/${c.id}`} aria-current={c.id === selected ? 'true' : undefined} dir="auto">
                      {c.user}
                    </a>
                    <p class="muted">
                      {c.channel} · {when(c.updated_at)}
                    </p>
                  </div>
                  <span class={`badge ${c.status}`}>{STATUS_TEXT[c.status]}</span>
                </li>
              ))}
            </ul>
          ) : null}
          {list.data && list.data.total > list.data.data.length ? (
            <p class="muted">
              The {list.data.data.length} latest of {list.data.total}; search to find others.
            </p>
          ) : null}
        </div>
        {selected ? (
          <ConversationView
            key={selected}
            id={selected}
            me={me}
            people={people}
            nameOf={nameOf}
            changed={changed.id === null || changed.id === selected ? changed.round : 0}
            onChanged={list.reload}
          />
        ) : (
          <p class="muted">Choose a conversation to read it and answer the customer.</p>
        )}
      </div>
    </section>
  );
}

function ConversationView(props: {
  id: string;
  me: Me;
  people: Member[];
  nameOf: (userId: string | null) => string;
  changed: number;
  onChanged: () => void;
}) {
  const { id, me } = props;
  const detail = useLoad(
    (signal) => api<ConversationDetail>(`/api/public/conversations/${id}`, { signal }),
    [id, props.changed],
  );
  const action = useAction();
  const [reply, setReply] = useState('');
  const [resolution, setResolution] = useState('');
  const [assignee, setAssignee] = useState('');
  const log = useRef<HTMLOListElement>(null);
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [detail.data?.messages.length]);

  const act = (verb: 'takeover' | 'release' | 'close' | 'assign', body?: unknown) =>
    void action.run(async () => {
      await api(`/api/public/conversations/${id}/${verb}`, { method: 'POST', body: body ?? {} });
      detail.reload();
      props.onChanged();
    });
  const send = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api(`/api/public/conversations/${id}/messages`, { method: 'POST', body: { content: reply } });
      setReply('');
      detail.reload();
      props.onChanged();
    });
  };

  if (detail.loading && !detail.data) return <Loading what="the conversation" />;
  if (!detail.data)
    return (
      <div>
        <ErrorNote error={detail.error} />
        <button type="button" onClick={() => go('inbox')}>
          Back to the inbox
        </button>
      </div>
    );
  const c = detail.data;
  const mayAct = canAct(me);
  const mine = c.assignee_id === me.id;
  const passable = c.status === 'handoff' || (c.status === 'assigned' && mine);
  const developers = props.people.filter((m) => m.role !== 'member' && m.user.id !== c.assignee_id);
  const authorOf = (m: Message) =>
    m.role === 'user' ? 'Customer' : m.role === 'assistant' ? 'Agent' : `Person (${props.nameOf(m.author_id)})`;
  return (
    <article class="card conversation" aria-labelledby="conversation-title">
      <header class="detail-header">
        <h2 id="conversation-title" dir="auto">
          {c.title || c.user}
        </h2>
        <span class={`badge ${c.status}`}>{STATUS_TEXT[c.status]}</span>
      </header>
      <dl class="facts">
        <dt>Customer</dt>
        <dd dir="auto">{c.user}</dd>
        <dt>Channel</dt>
        <dd>{c.channel}</dd>
        <dt>Assigned to</dt>
        <dd>{props.nameOf(c.assignee_id)}</dd>
        {c.handoff_reason ? (
          <>
            <dt>Why a person</dt>
            <dd dir="auto">{c.handoff_reason}</dd>
          </>
        ) : null}
      </dl>
      <ErrorNote error={detail.error ?? action.error} />
      {c.message_count > c.messages.length ? (
        <p class="muted">
          The latest {c.messages.length} of {c.message_count} messages.
        </p>
      ) : null}
      <ol class="chat-log" ref={log} aria-label="Messages" tabIndex={0}>
        {c.messages.map((m) => (
          <li key={m.id} class={`bubble ${m.role === 'user' ? 'customer' : m.role}`}>
            <span class="bubble-author">
              {authorOf(m)} · <time>{when(m.created_at)}</time>
            </span>
            <span class="bubble-text" dir="auto">
              {m.content}
            </span>
            {m.delivery_status === 'failed' ? (
              <span class="error-inline">Not delivered: {m.delivery_error}</span>
            ) : m.delivery_status === 'pending' ? (
              <span class="muted">Sending…</span>
            ) : null}
          </li>
        ))}
      </ol>
      {!mayAct ? <p class="note">Members read the inbox; a developer or administrator answers.</p> : null}
      {mayAct && c.status === 'bot' ? (
        <div class="form-actions">
          <p>The agent is answering this conversation.</p>
          <button type="button" class="primary" disabled={action.pending} onClick={() => act('takeover')}>
            Take over
          </button>
        </div>
      ) : null}
      {mayAct && (c.status === 'handoff' || (c.status === 'assigned' && mine)) ? (
        <form class="form" onSubmit={send} aria-label="Reply to the customer">
          <Field label="Reply" hint="The customer gets it on their channel at once.">
            <textarea
              value={reply}
              required
              maxLength={4000}
              rows={3}
              dir="auto"
              onInput={(e) => setReply(e.currentTarget.value)}
            />
          </Field>
          <button type="submit" class="primary" disabled={action.pending || !reply.trim()}>
            Send reply
          </button>
        </form>
      ) : null}
      {mayAct && c.status === 'assigned' && !mine ? (
        <p class="note">{props.nameOf(c.assignee_id)} has this conversation; only they can pass it on.</p>
      ) : null}
      {mayAct && c.status !== 'closed' ? (
        <div class="card-actions">
          {passable ? (
            <div class="row">
              {c.status === 'handoff' ? (
                <button type="button" disabled={action.pending} onClick={() => act('assign')}>
                  Assign to me
                </button>
              ) : null}
              {developers.length > 0 ? (
                <>
                  <Field label="Assign to">
                    <select value={assignee} onChange={(e) => setAssignee(e.currentTarget.value)}>
                      <option value="">Choose a person</option>
                      {developers.map((m) => (
                        <option key={m.user.id} value={m.user.id}>
                          {props.nameOf(m.user.id)}
                        </option>
                      ))}
                    </select>
                  </Field>
                  <button
                    type="button"
                    disabled={action.pending || !assignee}
                    onClick={() => act('assign', { assignee_id: assignee })}
                  >
                    Assign
                  </button>
                </>
              ) : null}
            </div>
          ) : null}
          {c.status !== 'bot' ? (
            <button type="button" disabled={action.pending} onClick={() => act('release')}>
              Give back to the agent
            </button>
          ) : null}
          <form
            class="row"
            aria-label="Close the conversation"
            onSubmit={(event) => {
              event.preventDefault();
              act('close', resolution.trim() ? { resolution: resolution.trim() } : {});
            }}
          >
            <Field label="Resolution (optional)">
              <input
                value={resolution}
                maxLength={2000}
                dir="auto"
                onInput={(e) => setResolution(e.currentTarget.value)}
              />
            </Field>
            <button type="submit" class="danger" disabled={action.pending}>
              Close conversation
            </button>
          </form>
        </div>
      ) : null}
      {c.status === 'closed' ? <p class="note">This conversation is closed; its support query is resolved.</p> : null}
    </article>
  );
}
