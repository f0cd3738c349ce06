/** Knowledge: upload a file or an article and watch its ingestion, the documents, a search preview. */
import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Empty, ErrorNote, Field, Loading, PageHeader, useAction, useLoad, when } from '../ui';

interface Document {
  id: string;
  title: string;
  status: string;
  error: string | null;
  chunk_count: number;
  source_type: string;
  file_name: string | null;
  language: string;
  created_at: string;
}

interface Task {
  task_id: string;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  error: string | null;
  chunk_count: number;
  embedding_status: string;
}

const STATUS_TEXT: Record<string, string> = {
  pending: 'Waiting to be read',
  processing: 'Reading and indexing',
  completed: 'Ready',
  failed: 'Failed',
};

export function KnowledgePage() {
  const documents = useLoad((signal) =>
    api<Page<Document>>('/api/public/documents/list', { method: 'POST', body: { limit: 100 }, signal }),
  );
  const [tasks, setTasks] = useState<{ title: string; taskId: string }[]>([]);
  return (
    <section>
      <PageHeader title="Knowledge" />
      <div class="grid-2">
        <Upload onStarted={(title, taskId) => setTasks((previous) => [{ title, taskId }, ...previous])} />
        <SearchPreview />
      </div>
      {tasks.length > 0 ? (
        <section aria-label="Uploads" class="card">
          <h2>Uploads</h2>
          <ul class="list">
            {tasks.map((task) => (
              <TaskProgress key={task.taskId} {...task} onDone={documents.reload} />
            ))}
          </ul>
        </section>
      ) : null}
      <h2>Documents</h2>
      {documents.loading && !documents.data ? <Loading what="documents" /> : null}
      <ErrorNote error={documents.error} />
      {documents.data && documents.data.data.length === 0 ? (
        <Empty title="No knowledge yet">
          <p>Upload a PDF or Word file, or paste an article above. Your agents answer from what you upload here.</p>
        </Empty>
      ) : null}
      {documents.data && documents.data.data.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Documents</caption>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Status</th>
                <th scope="col">Passages</th>
                <th scope="col">Added</th>
              </tr>
            </thead>
            <tbody>
              {documents.data.data.map((doc) => (
                <tr key={doc.id}>
                  <td dir="auto">{doc.title}</td>
                  <td>
                    <span class={`badge ${doc.status}`}>{STATUS_TEXT[doc.status] ?? doc.status}</span>
                    {doc.error ? <span class="error-inline"> {doc.error}</span> : null}
                  </td>
                  <td>{doc.chunk_count}</td>
                  <td>{when(doc.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function Upload({ onStarted }: { onStarted: (title: string, taskId: string) => void }) {
  const [kind, setKind] = useState<'file' | 'article'>('file');
  const [title, setTitle] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [content, setContent] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      let started: { task_id: string };
      if (kind === 'file') {
        if (!file) throw new Error('Choose a PDF or Word file first');
        const form = new FormData();
        form.set('document_title', title || file.name);
        form.set('file', file);
        started = await api('/api/public/documents/upload/file', { method: 'POST', form });
      } else {
        started = await api('/api/public/documents/upload/article', {
          method: 'POST',
          body: { document_title: title, content },
        });
      }
      onStarted(title || file?.name || 'Article', started.task_id);
      setTitle('');
      setContent('');
      setFile(null);
      (event.target as HTMLFormElement).reset();
    });
  };
  return (
    <form class="card form" onSubmit={submit} aria-label="Upload knowledge">
      <h2>Upload knowledge</h2>
      <fieldset class="segmented">
        <legend class="visually-hidden">What to upload</legend>
        <label>
          <input type="radio" name="kind" checked={kind === 'file'} onChange={() => setKind('file')} /> A file
        </label>
        <label>
          <input type="radio" name="kind" checked={kind === 'article'} onChange={() => setKind('article')} /> An article
        </label>
      </fieldset>
      <Field label="Title">
        <input
          dir="auto"
          maxLength={500}
          required={kind === 'article'}
          value={title}
          onInput={(e) => setTitle(e.currentTarget.value)}
        />
      </Field>
      {kind === 'file' ? (
        <Field label="File" hint="PDF or DOCX">
          <input
            type="file"
            accept=".pdf,.docx,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </Field>
      ) : (
        <Field label="Text">
          <textarea dir="auto" rows={6} required value={content} onInput={(e) => setContent(e.currentTarget.value)} />
        </Field>
      )}
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.pending}>
        {action.pending ? 'Uploading…' : 'Upload'}
      </button>
    </form>
  );
}

/** Polls the ingestion task until it completes or fails. */
function TaskProgress({ title, taskId, onDone }: { title: string; taskId: string; onDone: () => void }) {
  const [task, setTask] = useState<Task | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const next = await api<Task>(`/api/public/documents/task/${encodeURIComponent(taskId)}`);
        if (stopped) return;
        setTask(next);
        if (next.status === 'completed' || next.status === 'failed') onDone();
        else timer = setTimeout(() => void poll(), 1000);
      } catch (caught) {
        if (!stopped) setError(caught instanceof Error ? caught.message : String(caught));
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [taskId]);
  const status = task?.status ?? 'pending';
  const value = { pending: 10, processing: 55, completed: 100, failed: 100 }[status];
  return (
    <li class="task" data-status={status}>
      <span dir="auto">{title}</span>
      <progress max={100} value={value} aria-label={`Ingestion of ${title}`} />
      <span role="status">
        {STATUS_TEXT[status]}
        {task?.status === 'completed' ? ` · ${task.chunk_count} passages` : ''}
      </span>
      <ErrorNote error={task?.error ?? error} />
    </li>
  );
}

interface Hit {
  chunk_id: string;
  title: string;
  text: string;
  score: number;
}

function SearchPreview() {
  const [text, setText] = useState('');
  const [hits, setHits] = useState<Hit[] | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await api<{ results: Hit[] }>('/api/public/documents/search', {
        method: 'POST',
        body: { query: text, search_method: {}, categories: [], top_k: 5 },
      });
      setHits(answer.results);
    });
  };
  return (
    <form class="card form" onSubmit={submit} aria-label="Search preview">
      <h2>Search preview</h2>
      <p class="muted">See which passages an agent would find for a question.</p>
      <Field label="Question">
        <input dir="auto" required maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={action.pending}>
        {action.pending ? 'Searching…' : 'Search'}
      </button>
      <ErrorNote error={action.error} />
      {hits && hits.length === 0 ? (
        <p role="status">Nothing found. Upload documents that answer this question.</p>
      ) : null}
      {hits && hits.length > 0 ? (
        <ol class="hits">
          {hits.map((hit) => (
            <li key={hit.chunk_id}>
              <strong dir="auto">{hit.title}</strong>
              <p dir="auto">{hit.text.length > 300 ? `${hit.text.slice(0, 300)}…` : hit.text}</p>
            </li>
          ))}
        </ol>
      ) : null}
    </form>
  );
}
