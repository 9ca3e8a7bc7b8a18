# C types of the arrays on disk; they must match the numpy dtypes written by engine/build.py.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

ctypedef int32_t id_t        # address, group, token, string ids; house numbers; micro-degrees
ctypedef int64_t off_t_      # byte offsets into blobs
ctypedef uint8_t byte_t      # letters, token kinds, blob bytes
ctypedef uint64_t mask_t     # street-word cover masks, deletion hashes
ctypedef float prior_t       # group prior
