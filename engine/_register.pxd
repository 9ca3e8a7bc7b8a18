# The register's (BAG's) rules for the parts of an address, in one place: the compiled core and
# the CSV reader cimport them (a .pxd of constants only: nothing to import at run time), and
# Python reads them as engine.MAX_HOUSE_NUMBER and engine.MAX_ADDITION_LENGTH (_core.SIZES).

cdef enum:
    NUMBER_MAX = 99999   # a house number (huisnummer) runs from 1 to this
    ADDITION_MAX = 4     # an addition (huisnummertoevoeging) holds 1 to this many letters and digits
