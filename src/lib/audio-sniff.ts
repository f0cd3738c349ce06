/**
 * What an uploaded file holds, read from its first bytes: the audio containers speech-to-text
 * engines take (WAV, MP3, AAC, OGG, WebM/Matroska, MP4/M4A/3GP, FLAC, AIFF, AMR, Sun .au), or
 * null. The declared type and file name are the client's word; these bytes are the file's. A
 * text file named `q.wav` and typed `audio/wav` is not audio, and is refused before any engine
 * (or the lack of one) is consulted.
 */

export type AudioContainer = 'wav' | 'mp3' | 'aac' | 'ogg' | 'webm' | 'mp4' | 'flac' | 'aiff' | 'amr' | 'au';

/** The formats named to a client whose file is not audio. */
export const AUDIO_FORMATS_SENTENCE = 'send WAV, MP3, OGG, WebM, M4A or FLAC';

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.max(0, end - start)).toString('latin1');
}

/** The container of `bytes`, or null when they do not start like audio. */
export function sniffAudio(bytes: Uint8Array): AudioContainer | null {
  if (bytes.length < 4) return null;
  const head = ascii(bytes, 0, Math.min(bytes.length, 12));
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WAVE') return 'wav';
  if (head.startsWith('OggS')) return 'ogg';
  if (head.startsWith('fLaC')) return 'flac';
  if (head.startsWith('ID3')) return 'mp3';
  if (head.startsWith('#!AMR')) return 'amr';
  if (head.startsWith('.snd')) return 'au';
  if (head.startsWith('FORM') && (head.slice(8, 12) === 'AIFF' || head.slice(8, 12) === 'AIFC')) return 'aiff';
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm';
  if (bytes.length >= 8 && head.slice(4, 8) === 'ftyp') return 'mp4';
  // An MPEG audio frame (11 sync bits): layer bits 00 are AAC's ADTS, the others MPEG layers I–III.
  if (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0) {
    const version = (bytes[1]! >> 3) & 3;
    const layer = (bytes[1]! >> 1) & 3;
    if (layer === 0) return (bytes[1]! & 0xf0) === 0xf0 ? 'aac' : null;
    if (version === 1) return null; // reserved
    const bitrate = bytes[2]! >> 4;
    const rate = (bytes[2]! >> 2) & 3;
    return bitrate !== 15 && rate !== 3 ? 'mp3' : null;
  }
  return null;
}

/**
 * Why an uploaded file is not audio a speech-to-text engine could read (the field named), or null.
 * `mimetype` and `filename` are quoted only as the client's declaration.
 */
export function notAudioReason(field: string, file: { buffer: Uint8Array; mimetype: string }): string | null {
  if (sniffAudio(file.buffer)) return null;
  const declared = /^[\w.+-]+\/[\w.+-]+$/.test(file.mimetype) ? file.mimetype : 'its type';
  return `Invalid field '${field}': the file is not audio (its content is not ${
    /^(audio|video)\//.test(file.mimetype) ? `the ${declared} it is declared as` : 'a known audio format'
  }; ${AUDIO_FORMATS_SENTENCE})`;
}
