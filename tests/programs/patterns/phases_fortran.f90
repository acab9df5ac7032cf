! Phases marked from Fortran (include/cairn_fortran.c compiled with the program, which
! links with or without cairn): 3 output steps, each a 4 KiB stream record flushed inside
! the "output" phase. Runs in the current directory.
program phases_fortran
  implicit none
  real(8) :: field(512)
  integer :: step
  field = 1.0d0
  open(unit=10, file='fields.bin', form='unformatted', access='stream', status='replace')
  do step = 1, 3
    call cairn_phase_begin('output')
    write(10) field
    flush(10)
    call cairn_phase_end('output')
  end do
  close(10)
end program phases_fortran
