/** G.711 companding of 16-bit linear PCM to 8-bit µ-law and A-law (ITU-T G.711). */

const BIAS = 0x84;
const CLIP = 32635;

export function linearToMuLaw(sample: number): number {
  let value = sample;
  const sign = value < 0 ? 0x80 : 0;
  if (sign) value = -value;
  if (value > CLIP) value = CLIP;
  value += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (value & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (value >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

export function muLawToLinear(byte: number): number {
  const value = ~byte & 0xff;
  const exponent = (value >> 4) & 0x07;
  const magnitude = ((((value & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  return value & 0x80 ? -magnitude : magnitude;
}

export function linearToALaw(sample: number): number {
  let value = sample >> 3; // 13-bit
  let mask = 0xd5; // sign bit set and even bits inverted
  if (value < 0) {
    mask = 0x55;
    value = -value - 1;
  }
  if (value > 0xfff) value = 0xfff;
  let exponent = 0;
  if (value >= 0x20) {
    exponent = 1;
    for (let v = value >> 5; v > 1; v >>= 1) exponent++;
  }
  const mantissa = exponent === 0 ? value >> 1 : (value >> exponent) & 0x0f;
  return ((exponent << 4) | mantissa) ^ mask;
}

export function aLawToLinear(byte: number): number {
  const value = byte ^ 0x55;
  const exponent = (value >> 4) & 0x07;
  let magnitude = (value & 0x0f) << 4;
  magnitude = exponent === 0 ? magnitude + 8 : (magnitude + 0x108) << (exponent - 1);
  return value & 0x80 ? magnitude : -magnitude;
}
