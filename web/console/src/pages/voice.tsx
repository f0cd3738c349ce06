/** Voice agents: choose a voice from the curated lists, hear it, make a voice agent of it. */
import { useEffect, useState } from 'preact/hooks';
import { api, apiBlob } from '../api';
import { Empty, ErrorNote, Field, Loading, PageHeader, useAction, useLoad } from '../ui';

interface Voice {
  voice_id: string;
  name: string;
  gender: string;
  accent: string;
  languages: string[];
  description: string;
}

interface VoiceAgent {
  id: string;
  name: string;
  voice_id: string;
  voice_name: string;
  language: string;
}

const LISTS = [
  ['english', 'English'],
  ['arabic', 'Arabic'],
  ['multilingual', 'Multilingual'],
] as const;

const SAMPLE: Record<string, string> = {
  english: 'Hello! How can I help you today?',
  arabic: 'مرحبا! كيف يمكنني مساعدتك اليوم؟',
  multilingual: 'Hello! How can I help you today?',
};

export function VoicePage() {
  const [list, setList] = useState<(typeof LISTS)[number][0]>('english');
  const voices = useLoad((signal) => api<{ voices: Voice[] }>(`/api/public/voice-agents/${list}`, { signal }), [list]);
  const agents = useLoad((signal) =>
    api<{ data: VoiceAgent[] } | VoiceAgent[]>('/api/public/voice-agents?limit=100', { signal }),
  );
  const [chosen, setChosen] = useState<Voice | null>(null);
  const [text, setText] = useState(SAMPLE.english!);
  const [audio, setAudio] = useState<string | null>(null);
  const hear = useAction();
  const create = useAction();
  const [name, setName] = useState('');
  useEffect(() => () => void (audio && URL.revokeObjectURL(audio)), [audio]);
  const voiceAgents = agents.data ? (Array.isArray(agents.data) ? agents.data : agents.data.data) : [];

  const play = (voice: Voice) =>
    void hear.run(async () => {
      setChosen(voice);
      const blob = await apiBlob(`/api/public/voice-agents/vendor/voices/${encodeURIComponent(voice.voice_id)}/tts`, {
        method: 'POST',
        body: { text, output_format: 'mp3_22050_32' },
      });
      setAudio(URL.createObjectURL(blob));
    });
  const save = (event: Event) => {
    event.preventDefault();
    if (!chosen) return;
    void create.run(async () => {
      await api('/api/public/voice-agents', {
        method: 'POST',
        body: { name, voice_id: chosen.voice_id, language: list === 'arabic' ? 'ar' : (chosen.languages[0] ?? 'en') },
      });
      setName('');
      agents.reload();
    });
  };
  return (
    <section>
      <PageHeader title="Voice agents" />
      <div class="grid-2">
        <section class="card" aria-labelledby="voices-title">
          <h2 id="voices-title">Choose a voice</h2>
          <div class="tabs" role="group" aria-label="Voice list">
            {LISTS.map(([value, label]) => (
              <button
                key={value}
                type="button"
                aria-pressed={list === value}
                onClick={() => {
                  setList(value);
                  setText(SAMPLE[value]!);
                }}
              >
                {label}
              </button>
            ))}
          </div>
          <Field label="Text to hear">
            <input dir="auto" maxLength={500} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </Field>
          {voices.loading && !voices.data ? <Loading what="voices" /> : null}
          <ErrorNote error={voices.error ?? hear.error} />
          <ul class="list">
            {voices.data?.voices.map((voice) => (
              <li key={voice.voice_id} class={chosen?.voice_id === voice.voice_id ? 'selected' : ''}>
                <div>
                  <strong>{voice.name}</strong>{' '}
                  <span class="muted">
                    {voice.gender} · {voice.accent} · {voice.languages.join(', ')}
                  </span>
                </div>
                <button
                  type="button"
                  onClick={() => play(voice)}
                  disabled={hear.pending}
                  aria-label={`Hear it: ${voice.name}`}
                >
                  {hear.pending && chosen?.voice_id === voice.voice_id ? 'Speaking…' : 'Hear it'}
                </button>
              </li>
            ))}
          </ul>
          {audio ? (
            <audio src={audio} controls autoPlay aria-label={`Sample of ${chosen?.name ?? 'the voice'}`} />
          ) : null}
        </section>
        <section class="card" aria-labelledby="voice-agents-title">
          <h2 id="voice-agents-title">Your voice agents</h2>
          {agents.loading && !agents.data ? <Loading what="voice agents" /> : null}
          <ErrorNote error={agents.error} />
          {agents.data && voiceAgents.length === 0 ? (
            <Empty title="No voice agents yet">
              <p>Hear a few voices, pick one, and name your voice agent below.</p>
            </Empty>
          ) : null}
          <ul class="list">
            {voiceAgents.map((agent) => (
              <li key={agent.id}>
                <strong dir="auto">{agent.name}</strong>
                <span class="muted">
                  {agent.voice_name} · {agent.language}
                </span>
              </li>
            ))}
          </ul>
          <form class="form" onSubmit={save} aria-label="New voice agent">
            <Field label="Name" hint={chosen ? `Voice: ${chosen.name}` : 'Choose a voice first.'}>
              <input dir="auto" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <ErrorNote error={create.error} />
            <button type="submit" class="primary" disabled={!chosen || create.pending}>
              Create voice agent
            </button>
          </form>
        </section>
      </div>
    </section>
  );
}
