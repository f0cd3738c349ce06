/**
 * The chat family's multipart/form-data body. A chat form is small — a message, or one audio
 * file within CHAT_MAX_AUDIO_BYTES — so it is read whole (Fastify enforces the size) and parsed
 * in one synchronous pass over the bytes (@remix-run/multipart-parser): ≈ 0.1 ms where a
 * streaming parser took ≈ 0.35 ms, all of it before the turn can start (docs/decisions.md).
 */
import { getMultipartBoundary, MultipartParseError, parseMultipart } from '@remix-run/multipart-parser';
import { AppErrors } from '../../http/errors.js';
import type { AudioPart } from './chat.schemas.js';

/** Parts a chat form may have (its fields are six). */
const MAX_PARTS = 30;

/** The form's fields by name, `audio` as an AudioPart; refuses other files and repeated fields. */
export function parseChatForm(
  body: Buffer,
  contentType: string,
  maxAudioBytes: number,
): Record<string, string | AudioPart> {
  const boundary = getMultipartBoundary(contentType);
  if (!boundary) throw AppErrors.validation('The multipart form has no boundary in its content-type');
  const fields: Record<string, string | AudioPart> = {};
  try {
    for (const part of parseMultipart(body, {
      boundary,
      maxParts: MAX_PARTS,
      maxFileSize: body.length,
      maxTotalSize: body.length,
    })) {
      const name = part.name;
      if (!name) throw AppErrors.validation('A part of the multipart form has no name');
      if (Object.hasOwn(fields, name)) throw AppErrors.validation(`Invalid field '${name}': given more than once`);
      if (!part.isFile) {
        fields[name] = part.text;
        continue;
      }
      if (name !== 'audio') throw AppErrors.validation(`Invalid field '${name}': only 'audio' may be a file`);
      if (part.size > maxAudioBytes)
        throw AppErrors.payloadTooLarge(`The audio file is larger than ${maxAudioBytes} bytes (CHAT_MAX_AUDIO_BYTES)`);
      fields[name] = {
        buffer: Buffer.from(part.bytes),
        filename: part.filename ?? 'audio',
        mimetype: part.mediaType ?? 'application/octet-stream',
      };
    }
  } catch (error) {
    if (error instanceof MultipartParseError)
      throw AppErrors.validation(`The multipart form could not be read: ${error.message}`);
    throw error;
  }
  return fields;
}
