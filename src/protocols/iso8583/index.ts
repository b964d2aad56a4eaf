// The public face of the ISO 8583 codec: dictionaries, pack/unpack, framing, masking, response codes,
// the data element numbers by name.
export type {
  BcdLayout, BitmapEncoding, Composite, Dictionary, FieldDefinition, FieldEncoding, FieldPrefix, FieldType, FieldValue,
  Message, MtiEncoding, PositionalSubfield, PrefixEncoding, Sensitivity, Subfields, TlvElement,
} from "./types.ts";
export { loadDictionary, parseDictionary } from "./dictionary.ts";
export {
  defaultDictionary, dictionaryByName, iso87AsciiDictionary, iso87BinaryDictionary, jposIso87aDictionary, jposIso87bDictionary,
  moovSpec87AsciiDictionary, shippedDictionaries,
} from "./dictionaries.ts";
export { pack, unpack, unpackTolerant, type CodecOptions, type TolerantRead } from "./message-codec.ts";
export {
  createDeframer, decodeFrameHeader, defaultFraming, Deframer, encodeFrameHeader, frameHeaderBytes, frameMessage, framings,
  isFraming, type DeframeResult, type Framing,
} from "./framing.ts";
export { alwaysSensitiveFields, maskDigitRuns, maskFieldValue, maskMessage, maskPan, maskSecret, maskTrack } from "./masking.ts";
export { responseCode, responseCodes, type ResponseCode, type ResponseOutcome } from "./response-codes.ts";
export { messageFromJson } from "./message-json.ts";
export { de, type DataElementName } from "./data-elements.ts";
export { textField } from "./fields.ts";
export {
  expectsResponse, isRepeatMti, isRequestOrAdvice, replayedResponse, responseMtiOf, responseOf, storableFields,
} from "./responses.ts";
export { bytesFromHex, hexFromBytes } from "./hex.ts";
