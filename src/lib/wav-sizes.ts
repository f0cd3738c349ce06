/** WAV sizes (DESIGN §9): a complete WAV body carries its real RIFF and data sizes. */

/**
 * A complete WAV file with its real sizes, from one whose sizes are placeholders (a streamed
 * header, ours or a provider's: 0, 0xFFFFFFFF or past the end): the RIFF size and the `data`
 * chunk's size are set from the bytes there are. A file already sized, or anything that is not a
 * RIFF/WAVE file with a `data` chunk, is returned as it is.
 */
export function withWavSizes(wav: Buffer): Buffer {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE')
    return wav;
  let at = 12;
  while (at + 8 <= wav.length) {
    const id = wav.toString('latin1', at, at + 4);
    if (id === 'data') {
      const data = wav.length - at - 8;
      const stated = wav.readUInt32LE(at + 4);
      if (stated !== 0 && stated !== 0xffffffff && stated <= data) return wav; // already sized
      const out = Buffer.from(wav);
      out.writeUInt32LE(data, at + 4);
      out.writeUInt32LE(out.length - 8, 4);
      return out;
    }
    at += 8 + wav.readUInt32LE(at + 4) + (wav.readUInt32LE(at + 4) & 1);
  }
  return wav;
}
