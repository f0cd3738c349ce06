/** Agents: the list, a form to create or edit one, and a chat pane to try a deployed agent. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Empty, ErrorNote, Field, go, Loading, PageHeader, useAction, useLoad, when } from '../ui';

export interface Agent {
  id: string;
  title: string;
  task_description: string;
  instructions: string;
  model: string;
  temperature: number;
  collection_ids: string[];
  languages: string[];
  welcome_message: string;
  created_at: string;
}

interface Deployment {
  id: string;
  deployable_id: string;
  status: string;
  agent_key: string;
  channel: string;
}

export function AgentsPage({ selected }: { selected?: string }) {
  const agents = useLoad((signal) => api<Page<Agent>>('/api/public/agents?limit=100', { signal }));
  const [editing, setEditing] = useState<Agent | 'new' | null>(null);
  const current = agents.data?.data.find((agent) => agent.id === selected);
  return (
    <section>
      <PageHeader title="Agents">
        <button type="button" class="primary" onClick={() => setEditing('new')}>
          New agent
        </button>
      </PageHeader>
      {editing ? (
        <AgentForm
          agent={editing === 'new' ? null : editing}
          onDone={(saved) => {
            setEditing(null);
            agents.reload();
            if (saved) go(`agents/${saved.id}`);
          }}
        />
      ) : null}
      {agents.loading && !agents.data ? <Loading what="agents" /> : null}
      <ErrorNote error={agents.error} />
      {agents.data && agents.data.data.length === 0 && !editing ? (
        <Empty title="No agents yet">
          <p>
            Create an agent: give it a name and instructions. It answers from your <a href="#/knowledge">knowledge</a>,
            so upload documents first if you have not.
          </p>
          <button type="button" class="primary" onClick={() => setEditing('new')}>
            Create your first agent
          </button>
        </Empty>
      ) : null}
      <div class="split">
        {agents.data && agents.data.data.length > 0 ? (
          <ul class="list" aria-label="Agents">
            {agents.data.data.map((agent) => (
              <li key={agent.id} class={agent.id === selected ? 'selected' : ''}>
                <a href={`#/agents/${agent.id}`} dir="auto" aria-current={agent.id === selected ? 'true' : undefined}>
                  {agent.title}
                </a>
                <span class="muted">
                  {agent.model} · {when(agent.created_at)}
                </span>
              </li>
            ))}
          </ul>
        ) : null}
        {current ? (
          <AgentDetail
            key={current.id}
            agent={current}
            onEdit={() => setEditing(current)}
            onDeleted={() => {
              go('agents');
              agents.reload();
            }}
          />
        ) : null}
      </div>
    </section>
  );
}

function AgentDetail({ agent, onEdit, onDeleted }: { agent: Agent; onEdit: () => void; onDeleted: () => void }) {
  const action = useAction();
  const remove = () =>
    void action.run(async () => {
      if (!confirm(`Delete the agent "${agent.title}"?`)) return;
      await api(`/api/public/agents/${agent.id}`, { method: 'DELETE' });
      onDeleted();
    });
  return (
    <article class="card detail">
      <header class="detail-header">
        <h2 dir="auto">{agent.title}</h2>
        <div class="page-actions">
          <button type="button" onClick={onEdit}>
            Edit
          </button>
          <button type="button" class="danger" onClick={remove}>
            Delete
          </button>
        </div>
      </header>
      <ErrorNote error={action.error} />
      <dl class="facts">
        <dt>Model</dt>
        <dd>{agent.model}</dd>
        <dt>Languages</dt>
        <dd>{agent.languages.join(', ')}</dd>
        <dt>Task</dt>
        <dd dir="auto">{agent.task_description || '—'}</dd>
        <dt>Instructions</dt>
        <dd dir="auto" class="pre">
          {agent.instructions || '—'}
        </dd>
      </dl>
      <ChatPane agent={agent} />
    </article>
  );
}

function AgentForm({ agent, onDone }: { agent: Agent | null; onDone: (saved: Agent | null) => void }) {
  const [title, setTitle] = useState(agent?.title ?? '');
  const [task, setTask] = useState(agent?.task_description ?? '');
  const [instructions, setInstructions] = useState(agent?.instructions ?? '');
  const [model, setModel] = useState(agent?.model ?? 'builtin:kb');
  const [languages, setLanguages] = useState((agent?.languages ?? ['en']).join(', '));
  const [welcome, setWelcome] = useState(agent?.welcome_message ?? '');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = {
        title,
        task_description: task,
        instructions,
        model,
        languages: languages
          .split(',')
          .map((code) => code.trim())
          .filter(Boolean),
        welcome_message: welcome,
      };
      const saved = agent
        ? await api<Agent>(`/api/public/agents/${agent.id}`, { method: 'PATCH', body })
        : await api<Agent>('/api/public/agents', { method: 'POST', body });
      onDone(saved);
    });
  };
  return (
    <form class="card form" onSubmit={submit} aria-label={agent ? 'Edit agent' : 'New agent'}>
      <h2>{agent ? `Edit ${agent.title}` : 'New agent'}</h2>
      <Field label="Name">
        <input dir="auto" required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      </Field>
      <Field label="What it does" hint="One sentence, e.g. answers questions about orders and returns.">
        <input dir="auto" maxLength={4000} value={task} onInput={(e) => setTask(e.currentTarget.value)} />
      </Field>
      <Field label="Instructions">
        <textarea
          dir="auto"
          rows={5}
          maxLength={20000}
          value={instructions}
          onInput={(e) => setInstructions(e.currentTarget.value)}
        />
      </Field>
      <div class="row">
        <Field label="Model" hint="builtin:kb answers from your knowledge without a language model.">
          <input value={model} required onInput={(e) => setModel(e.currentTarget.value)} />
        </Field>
        <Field label="Languages" hint="ISO codes, comma separated: en, ar">
          <input value={languages} onInput={(e) => setLanguages(e.currentTarget.value)} />
        </Field>
      </div>
      <Field label="Welcome message">
        <input dir="auto" maxLength={2000} value={welcome} onInput={(e) => setWelcome(e.currentTarget.value)} />
      </Field>
      <ErrorNote error={action.error} />
      <div class="form-actions">
        <button type="submit" class="primary" disabled={action.pending}>
          {action.pending ? 'Saving…' : agent ? 'Save changes' : 'Create agent'}
        </button>
        <button type="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface Line {
  role: 'user' | 'assistant';
  text: string;
}

/**
 * Chats with a live deployment of the agent through the chat family, with a chat token bound to
 * the agent that the pane creates and revokes again when it closes.
 */
function ChatPane({ agent }: { agent: Agent }) {
  const deployments = useLoad(
    (signal) => api<Page<Deployment>>('/api/public/deployments?limit=100', { signal }),
    [agent.id],
  );
  const live = deployments.data?.data.find((d) => d.deployable_id === agent.id && d.status === 'active');
  const [lines, setLines] = useState<Line[]>([]);
  const [text, setText] = useState('');
  const [conversation, setConversation] = useState<string | null>(null);
  const token = useRef<{ id: string; token: string } | null>(null);
  const action = useAction();
  const log = useRef<HTMLOListElement>(null);

  useEffect(
    () => () => {
      const made = token.current;
      if (made) void api(`/api/public/chat-tokens/${made.id}`, { method: 'DELETE' }).catch(() => null);
    },
    [],
  );
  useEffect(() => log.current?.lastElementChild?.scrollIntoView({ block: 'nearest' }), [lines]);

  if (deployments.loading && !deployments.data) return <Loading what="deployments" />;
  if (!live) {
    return (
      <div class="chat">
        <h3>Try it</h3>
        <Empty title="This agent is not live yet">
          <p>Deploy it on a channel to chat with it here.</p>
          <a class="button primary" href={`#/deployments?agent=${agent.id}`}>
            Deploy {agent.title}
          </a>
        </Empty>
      </div>
    );
  }
  const send = (event: Event) => {
    event.preventDefault();
    const question = text.trim();
    if (!question) return;
    void action.run(async () => {
      token.current ??= await api<{ id: string; token: string }>('/api/public/chat-tokens', {
        method: 'POST',
        body: { name: 'console chat pane', agent_id: agent.id },
      });
      setLines((previous) => [...previous, { role: 'user', text: question }]);
      setText('');
      const answer = await api<{ conversation_id: string; agent_response_text: string }>('/api/v1/chat/agent/chat', {
        method: 'POST',
        headers: { 'x-api-token': token.current.token },
        body: {
          agent_key: live.agent_key,
          query: question,
          user: 'console',
          ...(conversation ? { conversation_id: conversation } : {}),
        },
      });
      setConversation(answer.conversation_id);
      setLines((previous) => [...previous, { role: 'assistant', text: answer.agent_response_text }]);
    });
  };
  return (
    <div class="chat">
      <h3>Try it</h3>
      <p class="muted">
        Live on <code>{live.agent_key}</code>
      </p>
      <ol class="chat-log" ref={log} aria-live="polite" aria-label="Conversation">
        {agent.welcome_message ? (
          <li class="bubble assistant" dir="auto">
            {agent.welcome_message}
          </li>
        ) : null}
        {lines.map((line, index) => (
          <li key={index} class={`bubble ${line.role}`} dir="auto">
            <span class="visually-hidden">{line.role === 'user' ? 'You: ' : 'Agent: '}</span>
            {line.text}
          </li>
        ))}
        {action.pending ? (
          <li class="bubble assistant muted" role="status">
            Thinking…
          </li>
        ) : null}
      </ol>
      <ErrorNote error={action.error} />
      <form class="chat-form" onSubmit={send}>
        <label class="visually-hidden" for="chat-input">
          Message
        </label>
        <input
          id="chat-input"
          dir="auto"
          placeholder="Ask something…"
          value={text}
          maxLength={8000}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={action.pending || !text.trim()}>
          Send
        </button>
      </form>
    </div>
  );
}
