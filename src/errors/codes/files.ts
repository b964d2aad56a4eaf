// Codes of the file service (src/files): received files, whatever source brought them.
export const fileErrorCodes = {
  FILE_REJECTED:
    "The file is structurally broken (control totals, record order, counts): nothing in it was "
      + "applied.",
  FILE_TOO_LARGE:
    "The file exceeds the largest file clearline receives; nothing was stored.",
  FILE_NAME_INVALID:
    "The file name is empty or names a path; only a plain file name is accepted.",
  FILE_NOT_FOUND:
    "No received file has this id for this tenant.",
  FILE_RECORD_NOT_FOUND:
    "The file has no record at this index (records are numbered from 1 in file order).",
} as const satisfies Record<string, string>;
