! Sub-communicators made from Fortran, as Fortran codes make them: the world split into
! rows of two ranks (MPI_COMM_SPLIT), a duplicate of it for a library (MPI_COMM_DUP) and a
! periodic ring as a Cartesian communicator (MPI_CART_CREATE); an MPI_ALLREDUCE on the row
! and on the duplicate, an MPI_BARRIER on the ring, then each freed.
!
!   subcomms_fortran [DIR]
program subcomms_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nranks, row, dup, ring, dims(1)
  logical :: periods(1)
  double precision :: x, total
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, rank / 2, rank, row, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  dims(1) = nranks
  periods(1) = .true.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, periods, .false., ring, ierr)
  x = rank
  call MPI_ALLREDUCE(x, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, row, ierr)
  call MPI_ALLREDUCE(x, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, dup, ierr)
  call MPI_BARRIER(ring, ierr)
  call MPI_COMM_FREE(row, ierr)
  call MPI_COMM_FREE(dup, ierr)
  call MPI_COMM_FREE(ring, ierr)
  call MPI_FINALIZE(ierr)
end program subcomms_fortran
