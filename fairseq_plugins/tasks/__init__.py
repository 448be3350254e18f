# Every module here is imported by fairseq itself when --user-dir is given.
