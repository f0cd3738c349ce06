import { describe, expect, it } from 'vitest';
import { wavHeader } from '../adapters/tts/encoders.js';
import { notAudioReason, sniffAudio } from './audio-sniff.js';

const bytes = (...values: number[]) => Buffer.from(values);

describe('sniffAudio', () => {
  it('reads the containers speech engines take from their first bytes', () => {
    expect(sniffAudio(Buffer.concat([wavHeader(16000, 0)]))).toBe('wav');
    expect(sniffAudio(Buffer.from('ID3\u0004\u0000\u0000'))).toBe('mp3');
    expect(sniffAudio(bytes(0xff, 0xfb, 0x90, 0x44))).toBe('mp3');
    expect(sniffAudio(bytes(0xff, 0xf1, 0x50, 0x80))).toBe('aac');
    expect(sniffAudio(Buffer.from('OggS\u0000\u0002'))).toBe('ogg');
    expect(sniffAudio(bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f))).toBe('webm');
    expect(sniffAudio(Buffer.from('\u0000\u0000\u0000\u0020ftypM4A '))).toBe('mp4');
    expect(sniffAudio(Buffer.from('fLaC\u0000\u0000'))).toBe('flac');
    expect(sniffAudio(Buffer.from('FORM\u0000\u0000\u0000\u0000AIFF'))).toBe('aiff');
    expect(sniffAudio(Buffer.from('#!AMR\n'))).toBe('amr');
    expect(sniffAudio(Buffer.from('.snd\u0000\u0000'))).toBe('au');
  });

  it('finds no audio in text, other files, a RIFF that is not WAVE, or bytes too few', () => {
    expect(sniffAudio(Buffer.from('hello, this is text'))).toBeNull();
    expect(sniffAudio(Buffer.from('%PDF-1.7\n'))).toBeNull();
    expect(sniffAudio(Buffer.from('RIFF\u0000\u0000\u0000\u0000AVI '))).toBeNull();
    expect(sniffAudio(bytes(0xff, 0xfb))).toBeNull();
    expect(sniffAudio(bytes(0xff, 0xfb, 0xf0, 0x00))).toBeNull(); // bitrate index 15 is not a frame
  });

  it('names the field and the declared type when the content is not audio', () => {
    const text = Buffer.from('plain text');
    expect(notAudioReason('file', { buffer: text, mimetype: 'audio/wav' })).toMatch(
      /^Invalid field 'file': the file is not audio \(its content is not the audio\/wav it is declared as; send WAV/,
    );
    expect(notAudioReason('audio', { buffer: text, mimetype: 'text/plain' })).toMatch(/'audio'.*a known audio format/);
    expect(notAudioReason('file', { buffer: wavHeader(8000, 0), mimetype: 'application/octet-stream' })).toBeNull();
  });
});
