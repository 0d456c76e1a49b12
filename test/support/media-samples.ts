/**
 * Small files of each type, made of their real signatures (what sniffing reads) and padding,
 * so that tests send exactly what a client would without binary fixtures in the repository.
 */
function padded(head: Buffer, size: number): Buffer {
  const body = Buffer.alloc(Math.max(size, head.length), 0x2e);
  head.copy(body);
  return body;
}

export const samples = {
  /** A 1×1 PNG, whole. */
  png: Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d6a0bb0000000049454e44ae426082',
    'hex',
  ),
  jpeg: (size = 2048) => padded(Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'), size),
  pdf: (size = 2048) => padded(Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n', 'latin1'), size),
  /** An Ogg page whose first packet is an Opus header: a voice note. */
  opus: (size = 2048) =>
    padded(
      Buffer.concat([
        Buffer.from('OggS', 'ascii'),
        Buffer.from('000200000000000000000000000000000000000000000113', 'hex'),
        Buffer.from('OpusHead', 'ascii'),
        Buffer.from('0101380180bb0000000000', 'hex'),
      ]),
      size,
    ),
  mp3: (size = 2048) => padded(Buffer.from('fffb9064000000000000000000000000', 'hex'), size),
  mp4: (size = 2048) => padded(Buffer.from('0000001c6674797069736f6d0000020069736f6d69736f326d703431', 'hex'), size),
  webp: (size = 2048) =>
    padded(Buffer.concat([Buffer.from('RIFF', 'ascii'), Buffer.from('24080000', 'hex'), Buffer.from('WEBPVP8 ', 'ascii')]), size),
  text: (size = 64) => padded(Buffer.from('name,amount\nAda,42\n', 'utf8'), size),
};
