// End-to-end tests of the announce binary live here.
