! Fortran unformatted sequential I/O, as legacy codes write restart and history files
! (gfortran's runtime turns each WRITE into a record marker, the data and the marker
! again, through write(2) after its own buffering): per step one record of a 512-element
! real(8) array, then the file is rewound and read back record by record.
!
!   fortran_sequential DIR STEPS
program fortran_sequential
  implicit none
  integer, parameter :: n = 512
  real(8) :: field(n)
  character(len=256) :: dir, arg
  integer :: steps, step, unit
  call get_command_argument(1, dir)
  call get_command_argument(2, arg)
  read (arg, *) steps
  field = 1.0d0
  open (newunit=unit, file=trim(dir)//'/history.bin', form='unformatted', &
        access='sequential', status='replace', action='readwrite')
  do step = 1, steps
    field(1) = step
    write (unit) field
  end do
  rewind (unit)
  do step = 1, steps
    read (unit) field
    if (int(field(1)) /= step) stop 1
  end do
  close (unit)
end program fortran_sequential
