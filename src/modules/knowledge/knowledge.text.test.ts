import { describe, expect, it } from 'vitest';
import { chunkText, detectLanguage, jaccard, shingles, textSearchConfig } from './knowledge.text.js';

describe('detectLanguage', () => {
  it.each([
    ['The quick brown fox jumps over the lazy dog while the farmer watches from the porch.', 'en'],
    ['ذهب الطلاب إلى المدرسة في الصباح الباكر لحضور الامتحان النهائي في مادة الرياضيات.', 'ar'],
    ['Le chat dort sur le canapé pendant que les enfants jouent dans le jardin avec leurs amis.', 'fr'],
    ['12345 67890', 'und'],
  ])('tells %s apart', (text, expected) => {
    expect(detectLanguage(text)).toBe(expected);
  });

  it('maps languages to text-search configurations, simple when unknown', () => {
    expect(textSearchConfig('ar')).toBe('arabic');
    expect(textSearchConfig('en')).toBe('english');
    expect(textSearchConfig('und')).toBe('simple');
  });
});

describe('chunkText', () => {
  const sentence = (i: number) => `Sentence number ${i} talks about topic ${i} in some detail.`;
  const text = Array.from({ length: 60 }, (_, i) => sentence(i)).join(' ');

  it('cuts on sentence boundaries near the target size', () => {
    const chunks = chunkText(text, 'en', { size: 300, overlap: 80 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(300);
      expect(chunk).toMatch(/^Sentence number \d+/);
      expect(chunk).toMatch(/detail\.$/);
    }
  });

  it('repeats the last sentences of a chunk at the start of the next', () => {
    const chunks = chunkText(text, 'en', { size: 300, overlap: 80 });
    const lastOfFirst = chunks[0]!.split(/(?<=\.) /).pop()!;
    expect(chunks[1]!.startsWith(lastOfFirst)).toBe(true);
  });

  it('keeps every sentence of the text', () => {
    const chunks = chunkText(text, 'en', { size: 300, overlap: 80 }).join(' ');
    for (let i = 0; i < 60; i++) expect(chunks).toContain(sentence(i));
  });

  it('splits Arabic on Arabic punctuation and long sentences at words', () => {
    const arabic = 'كيف حالك اليوم؟ أنا بخير والحمد لله. '.repeat(40);
    const chunks = chunkText(arabic, 'ar', { size: 200, overlap: 40 });
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.every((chunk) => chunk.length <= 200)).toBe(true);
    const long = chunkText('word '.repeat(500), 'en', { size: 100, overlap: 0 });
    expect(long.every((chunk) => chunk.length <= 100)).toBe(true);
  });
});

describe('shingles and jaccard', () => {
  it('scores identical texts 1, unrelated texts 0 and edits in between', () => {
    const a = shingles('the refund policy allows returns within thirty days of purchase');
    expect(jaccard(a, a)).toBe(1);
    expect(jaccard(a, shingles('shipping takes two weeks to international destinations'))).toBe(0);
    const edited = jaccard(a, shingles('the refund policy allows returns within sixty days of purchase'));
    expect(edited).toBeGreaterThan(0.2);
    expect(edited).toBeLessThan(1);
  });
});
