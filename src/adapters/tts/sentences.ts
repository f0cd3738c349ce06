/** Splits text into sentences (Latin and Arabic punctuation, line breaks), each at most `max` characters. */
export function splitSentences(text: string, max = 300): string[] {
  const pieces = text
    .split(/(?<=[.!?؟…。])\s+|\n+/u)
    .map((piece) => piece.trim())
    .filter(Boolean);
  const out: string[] = [];
  for (let piece of pieces) {
    while (piece.length > max) {
      const cut = Math.max(piece.lastIndexOf(', ', max), piece.lastIndexOf('، ', max), piece.lastIndexOf(' ', max));
      const at = cut > max / 3 ? cut + 1 : max;
      out.push(piece.slice(0, at).trim());
      piece = piece.slice(at).trim();
    }
    if (piece) out.push(piece);
  }
  return out;
}
